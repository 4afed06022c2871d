#!/usr/bin/env python3
"""Validates deploy/kubernetes/ without a cluster (`--run BINARY`: also runs the Jobs' commands locally).

1. Every manifest (deploy/kubernetes/*.yaml and examples/*.yaml) against the Kubernetes API
   schemas of the version deploy/kubernetes/README.md names ("Kubernetes 1.NN"), strictly
   (unknown fields are errors), with kubernetes-validate from PyPI (installed if missing).
2. The validator itself rejects a broken copy (a misspelt field), so a pass means something.
3. What the files must agree on: the shard Job is Indexed, its completions and parallelism
   equal SHARDS in the ConfigMap, it passes JOB_COMPLETION_INDEX as --shard and takes the API
   key from the Secret; the merge Job waits for the shards; the volume is ReadWriteMany; the
   Dockerfile is multi-stage from the official Swift image to its slim runtime.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DEPLOY = os.path.join(ROOT, "deploy", "kubernetes")


def ensure_validator():
    try:
        import kubernetes_validate  # noqa: F401
    except ImportError:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "kubernetes-validate"])


def fail(message):
    print(f"check_kubernetes: FAIL: {message}")
    sys.exit(1)


def validate(version, files):
    result = subprocess.run(
        [sys.executable, "-m", "kubernetes_validate", "--strict", "--quiet", "-k", version, *files],
        capture_output=True, text=True)
    return result.returncode, (result.stdout + result.stderr).strip()


def main():
    ensure_validator()
    import yaml

    readme = open(os.path.join(DEPLOY, "README.md"), encoding="utf-8").read()
    match = re.search(r"Kubernetes (1\.\d+)", readme)
    if not match:
        fail("deploy/kubernetes/README.md names no Kubernetes version ('Kubernetes 1.NN')")
    version = match.group(1) + ".0"

    files = sorted(glob.glob(os.path.join(DEPLOY, "*.yaml")) + glob.glob(os.path.join(DEPLOY, "examples", "*.yaml")))
    if len(files) < 6:
        fail(f"expected the namespace, ConfigMap, PVC, two Jobs and the Secret example; found {files}")
    code, output = validate(version, files)
    if code != 0:
        fail(f"manifests do not validate against Kubernetes {version}:\n{output}")

    # The validator must catch a misspelt field, or a pass above means nothing.
    with tempfile.TemporaryDirectory() as tmp:
        broken = os.path.join(tmp, "broken.yaml")
        text = open(os.path.join(DEPLOY, "shards-job.yaml"), encoding="utf-8").read()
        open(broken, "w", encoding="utf-8").write(text.replace("completionMode:", "completionsMode:"))
        code, _ = validate(version, [broken])
        if code == 0:
            fail("kubernetes-validate accepted a misspelt field; the check is not strict")

    docs = {}
    for path in files:
        for doc in yaml.safe_load_all(open(path, encoding="utf-8")):
            if doc:
                docs[(doc["kind"], doc["metadata"]["name"])] = doc
    config = docs[("ConfigMap", "optolink-soak-run")]["data"]
    shards = docs[("Job", "optolink-soak-shards")]["spec"]
    merge = docs[("Job", "optolink-soak-merge")]["spec"]
    pvc = docs[("PersistentVolumeClaim", "optolink-soak-reports")]["spec"]
    if shards.get("completionMode") != "Indexed":
        fail("the shard Job is not completionMode: Indexed")
    if not (shards["completions"] == shards["parallelism"] == int(config["SHARDS"])):
        fail(f"completions {shards['completions']}, parallelism {shards['parallelism']} and SHARDS "
             f"{config['SHARDS']} differ")
    container = shards["template"]["spec"]["containers"][0]
    args = container["args"]
    if "--shard" not in args or args[args.index("--shard") + 1] != "$(JOB_COMPLETION_INDEX)/$(SHARDS)":
        fail(f"the shard Job does not pass --shard $(JOB_COMPLETION_INDEX)/$(SHARDS): {args}")
    for flag in ["--start-at", "--base-url", "--run-id", "--out"]:
        if flag not in args:
            fail(f"the shard Job does not pass {flag}")
    # The key comes from the environment (or a mounted file), never from args: arguments show in `ps`.
    for (kind, name), doc in docs.items():
        spec = doc.get("spec", {}).get("template", {}).get("spec", {})
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            text = " ".join(c.get("args", []) + c.get("command", []))
            if "--api-key " in text + " " or "$(OPTOLINK_API_KEY)" in text or "${OPTOLINK_API_KEY}" in text:
                fail(f"{kind} {name}: the API key is in a container's args ({c['name']})")
    secret_refs = [e for e in container.get("env", []) if e.get("valueFrom", {}).get("secretKeyRef")]
    if not secret_refs or secret_refs[0]["valueFrom"]["secretKeyRef"]["name"] != "optolink-soak-api-key":
        fail("the API key does not come from the optolink-soak-api-key Secret")
    if "OPTOLINK_API_KEY" in config or "api-key" in config:
        fail("the API key is in the ConfigMap")
    if not merge["template"]["spec"].get("initContainers"):
        fail("the merge Job does not wait for the shards (no init container)")
    if "merge" not in " ".join(merge["template"]["spec"]["containers"][0]["args"]):
        fail("the merge Job does not run `optolink-soak merge`")
    if pvc["accessModes"] != ["ReadWriteMany"]:
        fail(f"the report volume is {pvc['accessModes']}, not ReadWriteMany")

    dockerfile = open(os.path.join(DEPLOY, "Dockerfile"), encoding="utf-8").read()
    stages = re.findall(r"^FROM\s+(\S+)", dockerfile, re.M)
    if len(stages) < 2 or not stages[0].startswith("swift:") or not re.match(r"swift:.*slim", stages[-1]):
        fail(f"the Dockerfile is not multi-stage from swift:* to swift:*-slim: {stages}")
    if "-c release" not in dockerfile:
        fail("the Dockerfile does not build the release binary")

    print(f"check_kubernetes: {len(files)} manifests valid for Kubernetes {version} (strict); "
          f"Indexed Job of {shards['completions']} shards, merge Job, RWX volume, multi-stage Dockerfile")


def expand(text, env):
    """Kubernetes' $(VAR) expansion in command and args."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), text)


def free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_jobs(binary, shards=2):
    """Runs the Jobs' own commands on this machine, no cluster: `serve` stands in for staging,
    each shard pod's args (with $(VAR) expanded from the ConfigMap, JOB_COMPLETION_INDEX and
    the Secret) run as processes, then the merge Job's wait script and merge script run under
    sh. The merged report must exist and the merge must exit 0."""
    import shutil
    import time
    import yaml

    docs = {}
    for path in glob.glob(os.path.join(DEPLOY, "*.yaml")):
        for doc in yaml.safe_load_all(open(path, encoding="utf-8")):
            if doc:
                docs[(doc["kind"], doc["metadata"]["name"])] = doc
    port = free_port()
    reports = tempfile.mkdtemp(prefix="k8s-dry-run-")
    env = dict(docs[("ConfigMap", "optolink-soak-run")]["data"])
    env.update({
        "OPTOLINK_BASE_URL": f"http://127.0.0.1:{port}",
        "PROFILE": os.path.join(ROOT, "Profiles", "smoke.json"),
        "SHARDS": str(shards),
        "RUN_ID": "dry-run",
        "START_AT": str(int(time.time()) + 4),
        "OPTOLINK_API_KEY": "opl_sdk_test_acme_client",
        "WAIT_SECONDS": "120",
    })
    # `serve` gets the profile's backend section (its limits), and streams its ledger to a file
    # the merge then reconciles against, as with a ledger exported from a real backend.
    config = os.path.join(reports, "staging.json")
    json.dump(json.load(open(env["PROFILE"], encoding="utf-8")).get("backend", {}), open(config, "w"))
    ledger = os.path.join(reports, "ledger.jsonl")
    env["MERGE_FLAGS"] = f"--ledger {ledger} --threshold 'retry.violations == 0'"
    server = subprocess.Popen(
        [binary, "serve", "--port", str(port), "--trust-forwarded-for", "--config", config, "--ledger-file", ledger],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                import urllib.request
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except Exception as error:  # any HTTP answer (even 404) means it is up
                if hasattr(error, "code"):
                    break
                time.sleep(0.1)
        shard_args = docs[("Job", "optolink-soak-shards")]["spec"]["template"]["spec"]["containers"][0]["args"]
        pods = []
        for index in range(shards):
            pod_env = dict(env, JOB_COMPLETION_INDEX=str(index))
            args = [expand(arg, pod_env).replace("/reports", reports) for arg in shard_args]
            log = open(os.path.join(reports, f"pod-{index}.log"), "w")
            # The pod's env (the ConfigMap and the Secret's OPTOLINK_API_KEY), as the container gets it.
            pods.append(subprocess.Popen([binary, *args], stdout=log, stderr=subprocess.STDOUT,
                                         env=dict(os.environ, **pod_env)))
        merge_spec = docs[("Job", "optolink-soak-merge")]["spec"]["template"]["spec"]
        sh_env = dict(os.environ, **env)
        wait_script = merge_spec["initContainers"][0]["args"][0].replace("/reports", reports)
        # Shorter polls than the pod's 15 s, same logic.
        wait_script = wait_script.replace("sleep 15", "sleep 1")
        subprocess.run(["/bin/sh", "-c", wait_script], env=sh_env, check=True, timeout=150, capture_output=True)
        codes = [pod.wait(timeout=60) for pod in pods]
        if any(code not in (0, 1) for code in codes):
            fail(f"shard pods exited {codes}; logs in {reports}")
        merge_script = merge_spec["containers"][0]["args"][0].replace("/reports", reports)
        merge_script = merge_script.replace("exec optolink-soak", f"exec {binary}")
        merged = subprocess.run(["/bin/sh", "-c", merge_script], env=sh_env, capture_output=True, text=True,
                                timeout=120)
        if merged.returncode != 0:
            fail(f"the merge Job's command exited {merged.returncode}:\n{merged.stderr[-2000:]}")
        for name in ["summary.json", "summary.txt", "report.html", "junit.xml"]:
            if not os.path.exists(os.path.join(reports, "dry-run", "merged", name)):
                fail(f"the merge Job's command wrote no {name}")
        summary = json.load(open(os.path.join(reports, "dry-run", "merged", "summary.json")))
        if summary["run"]["shards"]["merged"] != list(range(shards)):
            fail(f"merged shards {summary['run']['shards']}")
        if not any(t["expression"] == "retry.violations == 0" for t in summary["thresholds"]):
            fail("MERGE_FLAGS' quoted --threshold did not reach the merge")
        if not summary["verdicts"]["reconciliation"]["available"]:
            fail("the merge did not reconcile against --ledger from MERGE_FLAGS")
        print(f"check_kubernetes: the Jobs' commands ran locally ({shards} shard pods against `serve`, "
              f"then the merge Job's wait and merge): exit 0, {summary['totals']['attempts']} attempts merged")
        shutil.rmtree(reports, ignore_errors=True)
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
    if len(sys.argv) > 2 and sys.argv[1] == "--run":
        run_jobs(sys.argv[2])
