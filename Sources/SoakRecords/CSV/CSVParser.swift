/// The one RFC 4180 row parser every CSV reader here uses (``CSV/parse(_:)``, ``CSVRowReader``,
/// ``ReportCSVReader``): it works on UTF-8 bytes, resumes where its input ran out (so a file can
/// arrive in chunks cut anywhere), and keeps one row at a time.
///
/// Rules (those ``CSV/row(_:)`` writes, plus what a hand-edited file may hold):
/// - a `"` that opens a field (no byte of it read yet) starts a quoted section, in which `,`,
///   CR and LF are data and `""` is one `"`; the section ends at a lone `"`, or at the end of input;
/// - outside quotes `,` ends a field, LF ends a row, CR is dropped and any other byte (a `"`
///   after the field's first byte too) is data;
/// - a last row without a final LF is a row; input that ends right after a LF has no empty row after it.
///
/// The delimiters are ASCII, and ASCII bytes never occur inside a multi-byte UTF-8 sequence, so
/// this splits text exactly as a parser of Unicode scalars with the same rules.
package struct CSVParser {
    /// Fields that could not be slices of the input: quoted with `""` or CR or data after the
    /// closing quote, holding an unquoted CR, or cut by the end of an input.
    private var scratch: [UInt8] = []
    private var spans: [CSVSpan] = []
    private var quoted = false
    /// A `"` inside quotes whose meaning (`""` or the closing quote) the next byte decides.
    private var quoteInQuotes = false
    /// Where the field being read starts in `scratch` (it is empty while `scratch.count` is there).
    private var fieldStart = 0
    /// Whether any byte of the current row was read (a lone CR before the end still makes a row).
    private var sawAny = false
    private var rowDone = false

    package init() {}

    /// Reads the next row from `input` at `offset`, moving `offset` past it.
    ///
    /// Returns `true` when a LF ends a row, or when `final` says `input` is all there is and it
    /// ends inside a row; ``withRow(in:_:)`` then shows the row. Returns `false` when `input` runs
    /// out first: the partial row is kept (copied) and continues with the next input given
    /// (`offset` then starts at 0), or, with `final`, when nothing is left.
    package mutating func nextRow(in input: UnsafeBufferPointer<UInt8>, at offset: inout Int, final: Bool) -> Bool {
        if rowDone {
            scratch.removeAll(keepingCapacity: true)
            spans.removeAll(keepingCapacity: true)
            fieldStart = 0
            sawAny = false
            rowDone = false
        }
        if consume(input, at: &offset) { return true }
        keepFieldsOf(input)
        guard final, sawAny else { return false }
        quoted = false
        quoteInQuotes = false
        endScratchField()
        rowDone = true
        return true
    }

    /// Calls `body` with the row the last ``nextRow(in:at:final:)`` returned `true` for; `input`
    /// must be the bytes that call was given.
    package func withRow<T>(in input: UnsafeBufferPointer<UInt8>, _ body: (CSVRow) throws -> T) rethrows -> T {
        try scratch.withUnsafeBufferPointer { scratch in
            try spans.withUnsafeBufferPointer { try body(CSVRow(input: input, scratch: scratch, spans: $0)) }
        }
    }

    /// Copies the fields that are slices of `input` to `scratch`, before `input` goes away (the
    /// field being read, at the end of `scratch`, stays at the end).
    private mutating func keepFieldsOf(_ input: UnsafeBufferPointer<UInt8>) {
        guard spans.contains(where: \.inInput) else { return }
        let partial = Array(scratch[fieldStart...])
        scratch.removeSubrange(fieldStart...)
        for index in spans.indices where spans[index].inInput {
            let span = spans[index]
            let start = scratch.count
            scratch.append(contentsOf: UnsafeBufferPointer(rebasing: input[span.start..<span.end]))
            spans[index] = CSVSpan(start: start, end: scratch.count, inInput: false)
        }
        fieldStart = scratch.count
        scratch.append(contentsOf: partial)
    }

    private mutating func endScratchField() {
        spans.append(CSVSpan(start: fieldStart, end: scratch.count, inInput: false))
        fieldStart = scratch.count
    }

    /// Consumes bytes until a LF outside quotes (`true`, `offset` past it) or the end of `input`.
    private mutating func consume(_ input: UnsafeBufferPointer<UInt8>, at offset: inout Int) -> Bool {
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        var i = offset
        let end = input.count
        defer { offset = i }
        if i < end { sawAny = true }
        while i < end {
            let byte = input[i]
            if quoteInQuotes {
                quoteInQuotes = false
                if byte == quote {
                    scratch.append(quote)
                    i += 1
                    continue
                }
                quoted = false  // the quote closed the section; `byte` is read outside quotes below
            }
            if quoted {
                var j = i
                while j < end && input[j] != quote { j += 1 }
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: input[i..<j]))
                if j < end { quoteInQuotes = true }
                i = Swift.min(j + 1, end)
                continue
            }
            let fieldIsEmpty = scratch.count == fieldStart
            switch byte {
            case comma:
                endScratchField()
                i += 1
            case lf:
                endScratchField()
                rowDone = true
                i += 1
                return true
            case cr:
                i += 1
            case quote where fieldIsEmpty:
                // `"…"` then `,` or LF is the slice between the quotes.
                var j = i + 1
                while j < end && input[j] != quote { j += 1 }
                if j + 1 < end, input[j + 1] == comma || input[j + 1] == lf {
                    spans.append(CSVSpan(start: i + 1, end: j, inInput: true))
                    i = j + 1
                    if input[i] == lf {
                        rowDone = true
                        i += 1
                        return true
                    }
                    i += 1
                } else {
                    quoted = true
                    i += 1
                }
            default:
                // A run of data bytes; a `"` in it is data, the field being no longer empty.
                // `,` LF CR are all below `-`, and most data bytes (digits, letters, `.`, `:`, `-`) are
                // not: skip 8 bytes at a time while none of them is below `-` (any byte b < 0x2D
                // borrows into its own top bit in word - 0x2D2D…, which ~word keeps when b < 0x80).
                var j = i + 1
                while j + 8 <= end {
                    let word = UnsafeRawPointer(input.baseAddress.unsafelyUnwrapped + j).loadUnaligned(as: UInt64.self)
                    if (word &- 0x2D2D_2D2D_2D2D_2D2D) & ~word & 0x8080_8080_8080_8080 != 0 { break }
                    j += 8
                }
                while j < end {
                    let next = input[j]
                    if next <= comma && (next == comma || next == lf || next == cr) { break }
                    j += 1
                }
                if fieldIsEmpty && j < end && input[j] != cr {
                    // The whole field: a slice of the input, ended by `,` or LF.
                    spans.append(CSVSpan(start: i, end: j, inInput: true))
                    i = j + 1
                    if input[j] == lf {
                        rowDone = true
                        return true
                    }
                } else {
                    scratch.append(contentsOf: UnsafeBufferPointer(rebasing: input[i..<j]))
                    i = j
                }
            }
        }
        return false
    }
}

/// Where one field of a row lies: in the parser's input, or in its scratch bytes.
private struct CSVSpan {
    package var start: Int
    package var end: Int
    var inInput: Bool
}

/// One CSV row's fields as UTF-8 bytes, unquoted (`""` made `"`, CR outside quotes dropped);
/// valid only inside the closure it is given to (``CSVParser/withRow(in:_:)``).
package struct CSVRow {
    private let input: UnsafeBufferPointer<UInt8>
    private let scratch: UnsafeBufferPointer<UInt8>
    private let spans: UnsafeBufferPointer<CSVSpan>

    fileprivate init(
        input: UnsafeBufferPointer<UInt8>, scratch: UnsafeBufferPointer<UInt8>, spans: UnsafeBufferPointer<CSVSpan>
    ) {
        self.input = input
        self.scratch = scratch
        self.spans = spans
    }

    /// The number of fields.
    package var count: Int { spans.count }

    /// The bytes of field `index` (`0..<count`).
    package subscript(index: Int) -> UnsafeBufferPointer<UInt8> {
        let span = spans[index]
        return UnsafeBufferPointer(rebasing: (span.inInput ? input : scratch)[span.start..<span.end])
    }

    /// Every field as a `String` (invalid UTF-8 repaired with U+FFFD).
    package var strings: [String] { (0..<count).map(string) }
}

/// Typed access to a row's fields by index: the record parsers (``AttemptRecord/init(csvRow:)``)
/// read `[String]` rows and ``CSVRow``s through it, so both follow the same rules.
package protocol CSVFields {
    /// The number of fields.
    var count: Int { get }
    /// Field `index` as text.
    func string(_ index: Int) -> String
    /// Whether field `index` is empty.
    func isEmpty(_ index: Int) -> Bool
    /// Field `index` as `Int(text)` reads it (an optional sign, then ASCII digits; `nil` on overflow).
    func int(_ index: Int) -> Int?
    /// Field `index` as `UInt64(text)` reads it.
    func uint64(_ index: Int) -> UInt64?
    /// Field `index` as `Double(text)` reads it (`12.25`, `1e-07`, `nan`, `inf`, `-inf`, …).
    func double(_ index: Int) -> Double?
}

extension CSVFields {
    /// An empty field as `.some(nil)`, a parseable one as `.some(value)`, anything else `nil`.
    package func optional<T>(_ index: Int, _ parse: (Int) -> T?) -> T?? {
        if isEmpty(index) { return .some(nil) }
        return parse(index).map { .some($0) }
    }

    /// Field `index` as text, `nil` when it is empty.
    func nonEmptyString(_ index: Int) -> String? { isEmpty(index) ? nil : string(index) }
}

extension Array: CSVFields where Element == String {
    package func string(_ index: Int) -> String { self[index] }
    package func isEmpty(_ index: Int) -> Bool { self[index].isEmpty }
    package func int(_ index: Int) -> Int? { Int(self[index]) }
    package func uint64(_ index: Int) -> UInt64? { UInt64(self[index]) }
    package func double(_ index: Int) -> Double? { Double(self[index]) }
}

extension CSVRow: CSVFields {
    package func string(_ index: Int) -> String { String(decoding: self[index], as: UTF8.self) }
    package func isEmpty(_ index: Int) -> Bool { self[index].isEmpty }
    package func int(_ index: Int) -> Int? { CSVNumber.integer(self[index]) }
    package func uint64(_ index: Int) -> UInt64? { CSVNumber.integer(self[index]) }
    package func double(_ index: Int) -> Double? { CSVNumber.double(self[index]) }
}

/// Numbers parsed straight from a field's UTF-8 bytes, each giving what the standard library's
/// parser gives for the same text (tests compare them on edge cases and on random inputs).
package enum CSVNumber {
    /// What `T(String(decoding: bytes, as: UTF8.self))` returns (radix 10): an optional `+` or
    /// `-`, then at least one ASCII digit, every step checked for overflow (so `-0` is a `UInt64`
    /// and `-9223372036854775808` an `Int`); anything else `nil`.
    package static func integer<T: FixedWidthInteger>(_ bytes: UnsafeBufferPointer<UInt8>) -> T? {
        var i = 0
        var negative = false
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            i = 1
        }
        guard i < bytes.count else { return nil }
        var value: T = 0
        while i < bytes.count {
            let digit = bytes[i] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (next, carry) =
                negative ? shifted.subtractingReportingOverflow(T(digit)) : shifted.addingReportingOverflow(T(digit))
            guard !overflow && !carry else { return nil }
            value = next
            i += 1
        }
        return value
    }

    /// What `Double(String(decoding: bytes, as: UTF8.self))` returns.
    ///
    /// `[-]digits[.digits]` with a significand `w` ≤ 2⁵³ and `k` ≤ 22 fraction digits (every
    /// six-decimal time, and the shortest form of most others) is computed as `w / 10^k`: both
    /// are exact doubles, so the one correctly rounded division is the correctly rounded value
    /// of the decimal, which is what the text parser returns (Clinger's fast path). Any other
    /// text (`nan`, `inf`, exponents, more digits) goes to `Double(String)` itself.
    package static func double(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        if let exact = shortDecimal(bytes) { return exact }
        return Double(String(decoding: bytes, as: UTF8.self))
    }

    /// `10^k` for `k` in `0...22`, each exactly representable.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
        1e19, 1e20, 1e21, 1e22,
    ]

    /// The fast path of ``double(_:)``; `nil` when the text is not of its form.
    package static func shortDecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        let negative = bytes.first == UInt8(ascii: "-")
        var i = negative ? 1 : 0
        var significand: UInt64 = 0
        let integerStart = i
        while i < bytes.count, case let digit = bytes[i] &- UInt8(ascii: "0"), digit < 10 {
            significand = significand &* 10 &+ UInt64(digit)
            i += 1
        }
        let integerDigits = i - integerStart
        var fractionDigits = 0
        var inFraction = false
        if i < bytes.count && bytes[i] == UInt8(ascii: ".") {
            inFraction = true
            i += 1
            let fractionStart = i
            while i < bytes.count, case let digit = bytes[i] &- UInt8(ascii: "0"), digit < 10 {
                significand = significand &* 10 &+ UInt64(digit)
                i += 1
            }
            fractionDigits = i - fractionStart
        }
        // Anything after the digits, or more digits than a UInt64 always holds (19), is not this form.
        guard i == bytes.count, integerDigits + fractionDigits <= 19 else { return nil }
        guard integerDigits > 0, !inFraction || fractionDigits > 0, fractionDigits < powersOfTen.count,
            significand <= 1 << 53
        else { return nil }
        let magnitude = Double(significand) / powersOfTen[fractionDigits]
        return negative ? -magnitude : magnitude
    }
}
