extension ProcessesRun {
    /// The environment of every shard process: this process's own, with the run's secrets in
    /// the variables ``SecretSources`` reads (the API key and org key for a `--base-url` run,
    /// the `--header` lines, the admin token) instead of the shard's arguments, where every user
    /// of the machine could read them in the process list. A variable the run does not use is
    /// removed: a shard drives the parent's `--base-url`, so an `OPTOLINK_API_KEY` inherited
    /// by an embedded run would otherwise replace the emulator's fixture key there.
    package static func shardEnvironment(_ options: SoakRunOptions, inherited: [String: String]) -> [String: String] {
        var environment = inherited
        let variables = [
            SecretSources.apiKeyVariable, SecretSources.orgKeyVariable, SecretSources.headersVariable,
            SecretSources.adminTokenVariable,
        ]
        for name in variables { environment[name] = nil }
        if options.baseURL != nil, let apiKey = options.apiKey { environment[SecretSources.apiKeyVariable] = apiKey }
        if !options.headers.isEmpty {
            environment[SecretSources.headersVariable] =
                options.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
        }
        if let token = options.adminToken { environment[SecretSources.adminTokenVariable] = token }
        return environment
    }
}
