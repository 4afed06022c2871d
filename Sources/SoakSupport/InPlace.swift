/// Runs `body` on `value` where it lives: a dictionary entry reached through its `default:`
/// subscript is modified in place, so the arrays and histograms it holds are not copied out of
/// the dictionary and back.
@inline(__always)
package func inPlace<T>(_ value: inout T, _ body: (inout T) -> Void) { body(&value) }
