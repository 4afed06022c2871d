import Testing

/// Whole runs that load the machine, serialized against each other: the wall-clock hard-stop
/// runs (`HardStopEndToEndTests`) and the virtual-time runs that compress a minute of work
/// into seconds (`VerdictEndToEndTests`, `TransportTests`, `MainJobTests`). A hard stop's
/// real-time bound is then never judged while a compressed run holds both cores.
@Suite(.serialized) enum WholeRuns {}
