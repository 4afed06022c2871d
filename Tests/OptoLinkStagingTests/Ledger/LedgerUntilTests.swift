import Foundation
import OptoLinkStaging
import Testing

/// `GET /__admin/ledger?until=EPOCH`: the ledger up to a run's end, for a reader that exports it
/// after the run while other traffic goes on.
@Suite struct LedgerUntilTests {
    func page(_ h: BackendHarness, _ query: String) throws -> [Int] {
        try JSONDecoder().decode(
            [StagingLedgerEntry].self, from: Data(try h.respond("GET", "/__admin/ledger?\(query)").body)
        ).map(\.sequence)
    }

    @Test("until ends the page at the first entry that arrived after it; with since and limit it pages")
    func untilBoundsThePage() throws {
        let h = BackendHarness()
        _ = try h.session("device-0001")
        h.time.advance(1)
        let start = h.time.now
        for index in 1...5 {
            _ = try h.event("device-0001", "open", properties: ["opl_corr": "r:1:\(index)"])
            h.time.advance(1)
        }
        // The session arrived at start − 1, the events at start + 0, 1, …, 4.
        #expect(try page(h, "until=\(start + 1.5)") == [1, 2, 3])
        #expect(try page(h, "until=\(start + 1)") == [1, 2, 3], "an entry at the bound is included")
        #expect(try page(h, "since=1&limit=1&until=\(start + 1.5)") == [2])
        #expect(try page(h, "since=3&until=\(start + 1.5)").isEmpty)
        #expect(try page(h, "until=\(start - 2)").isEmpty)
        #expect(try page(h, "limit=2") == [1, 2], "without until, as before")
        for query in ["until=x", "until=-1", "until=nan", "until=inf"] {
            let response = try h.respond("GET", "/__admin/ledger?\(query)")
            #expect(response.status == 400, "\(query)")
            #expect(String(decoding: response.body, as: UTF8.self).contains("until"), "\(query)")
        }
    }
}
