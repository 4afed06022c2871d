#!/usr/bin/env python3
"""Validates deploy/kubernetes/ without a cluster.

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
    for flag in ["--start-at", "--base-url", "--run-id", "--api-key", "--out"]:
        if flag not in args:
            fail(f"the shard Job does not pass {flag}")
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


if __name__ == "__main__":
    main()
