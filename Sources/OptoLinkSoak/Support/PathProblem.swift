import Foundation

/// Why a path given on the command line cannot be used, as a sentence naming the path; checked
/// before Foundation is asked, whose own errors read `NSCocoaErrorDomain error 256`.
enum PathProblem {
    /// Whether two paths name the same place once made absolute, standardized and with symbolic
    /// links resolved (`Reports/a`, `./Reports/a/` and a link to it are one place).
    static func samePlace(_ a: String, _ b: String) -> Bool {
        func resolved(_ path: String) -> String {
            URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        }
        return resolved(a) == resolved(b)
    }

    /// What sits at `path` (symbolic links followed), in words (`a directory`, `a character
    /// device`), or nil when nothing does.
    static func kind(at path: String) -> String? {
        let path = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let type = attributes[.type] as? FileAttributeType
        else {
            return FileManager.default.fileExists(atPath: path) ? "something unreadable" : nil
        }
        switch type {
        case .typeRegular: return "a regular file"
        case .typeDirectory: return "a directory"
        case .typeCharacterSpecial: return "a character device"
        case .typeBlockSpecial: return "a block device"
        case .typeSocket: return "a socket"
        case .typeSymbolicLink: return "a broken symbolic link"
        default: return "not a regular file"
        }
    }

    /// The problem with reading `path` as the `what` file (e.g. `profile`), or nil when it is a
    /// readable, non-empty regular file.
    static func readingFile(_ path: String, as what: String) -> String? {
        guard let kind = kind(at: path) else {
            return "\(path): no such file (the \(what) must be a JSON file)"
        }
        if kind == "a directory" {
            return "\(path): is a directory, not a \(what) file (give the path of a .json file)"
        }
        guard kind == "a regular file" else {
            return "\(path): is \(kind), not a \(what) file (give the path of a .json file)"
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            return "\(path): permission denied (the \(what) file is not readable by this user)"
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        if size == 0 { return "\(path): the \(what) file is empty (0 bytes)" }
        return nil
    }

    /// The problem with creating (or reusing) `path` as a report directory, or nil when it can be:
    /// a file in the way, an ancestor that is a file, or no permission to create it.
    static func creatingDirectory(_ path: String) -> String? {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        if let kind = kind(at: url.path) {
            if kind == "a directory" {
                return FileManager.default.isWritableFile(atPath: url.path)
                    ? nil : "\(path): permission denied (the directory is not writable by this user)"
            }
            return "\(path): is \(kind), not a directory"
        }
        var ancestor = url.deletingLastPathComponent()
        while ancestor.path != "/", kind(at: ancestor.path) == nil {
            ancestor = ancestor.deletingLastPathComponent()
        }
        guard let kind = kind(at: ancestor.path), kind == "a directory" else {
            return "\(path): cannot be created because \(ancestor.path) is \(kind(at: ancestor.path) ?? "missing"), "
                + "not a directory"
        }
        guard FileManager.default.isWritableFile(atPath: ancestor.path) else {
            return "\(path): cannot be created (no permission to write in \(ancestor.path))"
        }
        return nil
    }

    /// The report file already in `directory` (`summary.json`, `attempts.csv`, …), if any.
    static func existingReport(in directory: String) -> String? {
        ["summary.json", "attempts.csv", "calls.csv", "summary.txt"].first {
            FileManager.default.fileExists(atPath: URL(fileURLWithPath: directory).appendingPathComponent($0).path)
        }
    }

    /// The problem with writing a report into `path` (`--out`), or nil: a directory that cannot
    /// be created, or one that already holds a report when `force` is not given.
    static func reportDirectory(_ path: String, force: Bool) -> String? {
        if let problem = creatingDirectory(path) { return "--out \(problem)" }
        if !force, let file = existingReport(in: path) {
            return "--out \(path): already holds a report (\(file)); choose a new directory, or pass --force to "
                + "overwrite it"
        }
        return nil
    }
}
