import Foundation
import OptoLinkStaging

/// `optolink-soak serve`: the staging emulator in the foreground until Ctrl-C.
///
/// HOOK (staging): starts `StagingServer` once the emulator lands on this branch.
enum ServeCommand {
    static func run(_ options: SoakCommand.ServeOptions) async -> Int32 {
        FileHandle.standardError.write(Data("error: serve: the staging emulator is not part of this build yet\n".utf8))
        return 2
    }
}
