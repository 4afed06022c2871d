import SoakSupport
import Testing

/// The in-place change of a dictionary value the client and the recorder use on their hot paths.
@Suite struct DictionaryModifyValueTests {
    @Test func aPresentValueChangesInPlaceAndAnAbsentKeyInsertsNothing() {
        var counts = ["a": 1, "b": 2]
        #expect(
            counts.modifyValue(forKey: "a") { value in
                value += 10
                return value * 2
            } == 22)
        #expect(counts == ["a": 11, "b": 2])
        #expect(counts.modifyValue(forKey: "z") { $0 += 1 } == nil)
        #expect(counts == ["a": 11, "b": 2])
        var empty: [Int: [Int]] = [:]
        #expect(empty.modifyValue(forKey: 1) { $0.append(1) } == nil)
        #expect(empty.isEmpty)
    }

    /// Changing a value of a dictionary that shares its storage leaves the other copy as it was.
    @Test func aSharedDictionaryIsCopiedBeforeTheChange() {
        var mine = [1: "x"]
        let theirs = mine
        mine.modifyValue(forKey: 1) { $0 += "y" }
        #expect(mine == [1: "xy"])
        #expect(theirs == [1: "x"])
    }
}
