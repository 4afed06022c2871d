extension String {
    /// Whether any UTF-8 byte of the string satisfies `predicate`, scanned over the string's own
    /// contiguous storage when it has one (native strings do): far cheaper than iterating
    /// `utf8` through its index, which request bodies and report rows do on every request.
    @inlinable
    package func anyUTF8Byte(where predicate: (UInt8) -> Bool) -> Bool {
        if let found = utf8.withContiguousStorageIfAvailable({ $0.contains(where: predicate) }) { return found }
        return utf8.contains(where: predicate)
    }
}

extension Array where Element == UInt8 {
    /// Appends the UTF-8 bytes of `text` in one copy from its contiguous storage when it has one.
    @inlinable
    package mutating func appendUTF8(of text: String) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { append(contentsOf: $0) }
        if copied == nil { append(contentsOf: text.utf8) }
    }
}
