"""Start, stop, kill and restart real OpenSearch nodes on 127.0.0.1: one, or a cluster of several JVMs.

Each node runs the home ``devkit.opensearch.build`` assembles, through OpenSearch's own launcher
(``bin/opensearch``), with a directory of its own under the caller's state directory: ``conf/``
(``opensearch.yml``, ``jvm.options``, the distribution's ``log4j2.properties``), ``data/``,
``logs/``, ``tmp/``, and ``node.json`` (what it was started with, so it can be started again with
its data: ``restart``). Its console output goes to ``<state dir>/<name>.log``.

- It binds to 127.0.0.1 only, with a bounded heap (``DOCINDEX_OPENSEARCH_HEAP_MB``, default 512).
- OpenSearch refuses to run as root. Started by root (as in CI and these sandboxes) the node runs in
  a user namespace of its own (``unshare --user``) as an unprivileged user that owns the node's files,
  with no privilege on the machine.
- A single node is ``discovery.type: single-node``; a cluster's nodes discover one another on their
  transport ports and elect a cluster manager among all of them.
- Disk watermarks are off: a nearly full development disk must not turn the indexes read-only.
- ``exit_with_parent``: a watchdog process kills the node once the calling process is gone (tests,
  bench, soak: nothing outlives them); ``docindex local up`` leaves its node running instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess  # starts the node's launcher with fixed argv  # nosec B404
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from devkit.local.servers import LocalServerError, ServerInfo, free_port, pid_alive

DEFAULT_HEAP_MB = 512
# Healthy within this on 2 vCPUs (measured: ~10-15 s for one node, see docs/local-run.md).
START_TIMEOUT = 90.0
CLUSTER_NAME = "docindex-local"
# The unprivileged user a node runs as when root starts it (in its own user namespace only).
NAMESPACE_UID = 1000


def heap_mb() -> int:
    return int(os.environ.get("DOCINDEX_OPENSEARCH_HEAP_MB", str(DEFAULT_HEAP_MB)))


@dataclass
class NodeSpec:
    name: str
    directory: str
    http_port: int
    transport_port: int
    heap_mb: int = DEFAULT_HEAP_MB
    cluster_name: str = CLUSTER_NAME
    # the transport ports of every node of the cluster (this one's included); empty: a single node
    cluster_transport_ports: list[int] = field(default_factory=list)
    cluster_nodes: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def path(self) -> Path:
        return Path(self.directory)


def _config(spec: NodeSpec) -> dict[str, Any]:
    path = spec.path
    settings: dict[str, Any] = {
        "cluster.name": spec.cluster_name,
        "node.name": spec.name,
        "network.host": "127.0.0.1",
        "http.port": spec.http_port,
        "transport.port": spec.transport_port,
        "path.data": str(path / "data"),
        "path.logs": str(path / "logs"),
        # snapshots to an `fs` repository (docindex's drills): under the node's state directory's parent,
        # so every node of a cluster sees the same folder, as a shared file system would be
        "path.repo": [str(path.parent / "snapshots")],
        "bootstrap.memory_lock": False,
        "cluster.routing.allocation.disk.threshold_enabled": False,
        "action.destructive_requires_name": False,
    }
    if spec.cluster_transport_ports:
        settings["discovery.seed_hosts"] = [f"127.0.0.1:{port}" for port in spec.cluster_transport_ports]
        settings["cluster.initial_cluster_manager_nodes"] = list(spec.cluster_nodes)
    else:
        settings["discovery.type"] = "single-node"
    settings.update(spec.settings)
    return settings


_JVM_OPTIONS = """\
# docindex's local node: the distribution's defaults, with the heap given by OPENSEARCH_JAVA_OPTS
-XX:+UseG1GC
-XX:G1ReservePercent=25
-XX:InitiatingHeapOccupancyPercent=30
-XX:+ExitOnOutOfMemoryError
-Djava.io.tmpdir=${OPENSEARCH_TMPDIR}
-XX:ErrorFile=@LOGS@/hs_err_pid%p.log
18-:-Djava.security.manager=allow
20-:--add-modules=jdk.incubator.vector
-Djava.util.concurrent.ForkJoinPool.common.threadFactory=org.opensearch.secure_sm.SecuredForkJoinWorkerThreadFactory
"""


def _write_config(spec: NodeSpec, home: Path) -> Path:
    conf = spec.path / "conf"
    for sub in ("conf", "data", "logs", "tmp"):
        (spec.path / sub).mkdir(parents=True, exist_ok=True)
    (spec.path.parent / "snapshots").mkdir(parents=True, exist_ok=True)
    # JSON is YAML: one setting a line, no quoting rules of our own
    (conf / "opensearch.yml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in _config(spec).items()))
    (conf / "jvm.options").write_text(_JVM_OPTIONS.replace("@LOGS@", str(spec.path / "logs")))
    shutil.copy2(home / "config" / "log4j2.properties", conf / "log4j2.properties")
    (spec.path / "node.json").write_text(json.dumps(asdict(spec), indent=2) + "\n")
    return conf


def _argv(home: Path) -> list[str]:
    launcher = [str(home / "bin" / "opensearch")]
    if os.geteuid() != 0:
        return launcher
    unshare = shutil.which("unshare")
    if not unshare:
        raise LocalServerError(
            "OpenSearch does not run as root, and `unshare` (util-linux) is missing to run it as another user"
        )
    uid = str(NAMESPACE_UID)
    return [unshare, "--user", f"--map-user={uid}", f"--map-group={uid}", *launcher]


def launch(spec: NodeSpec, *, exit_with_parent: bool = False) -> ServerInfo:
    """Start the node of ``spec`` (not waiting for it); its ServerInfo (pid: the node's JVM)."""
    from devkit.opensearch.build import home as built_home
    from devkit.opensearch.java import java_home

    home = built_home()
    conf = _write_config(spec, home)
    env = {
        **os.environ,
        "OPENSEARCH_JAVA_HOME": str(java_home()),
        "OPENSEARCH_PATH_CONF": str(conf),
        "OPENSEARCH_TMPDIR": str(spec.path / "tmp"),
        "OPENSEARCH_JAVA_OPTS": f"-Xms{spec.heap_mb}m -Xmx{spec.heap_mb}m",
    }
    for leaked in ("JAVA_TOOL_OPTIONS", "JAVA_OPTS", "OPENSEARCH_HOME"):
        env.pop(leaked, None)
    log = spec.path.parent / f"{spec.name}.log"
    with log.open("ab") as out:
        process = subprocess.Popen(  # noqa: S603  # the node's own launcher  # nosec B603
            _argv(home),
            cwd=spec.path,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    if exit_with_parent:
        subprocess.Popen(  # noqa: S603  # our interpreter, our module  # nosec B603
            [sys.executable, "-m", "devkit.opensearch.watchdog", str(os.getpid()), str(process.pid)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    return ServerInfo(spec.name, spec.url, process.pid)


def health(url: str, *, nodes: int | None = None, timeout: float = 2.0) -> dict[str, Any] | None:
    """The cluster's health at ``url`` once it is yellow or green (with ``nodes`` nodes); None before."""
    query = "wait_for_status=yellow&timeout=1s" + (f"&wait_for_nodes={nodes}" if nodes else "")
    try:
        with urllib.request.urlopen(f"{url}/_cluster/health?{query}", timeout=timeout) as response:  # noqa: S310  # nosec B310
            body: dict[str, Any] = json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None
    if body.get("timed_out") or body.get("status") not in ("yellow", "green"):
        return None
    return body


def wait_healthy(
    info: ServerInfo, spec: NodeSpec, *, nodes: int | None = None, timeout: float = START_TIMEOUT
) -> float:
    """Wait until the node answers a healthy cluster; the seconds it took (LocalServerError: it exited or timed out)."""
    started = time.monotonic()
    log = spec.path.parent / f"{spec.name}.log"
    while time.monotonic() - started < timeout:
        if not pid_alive(info.pid):
            raise LocalServerError(f"OpenSearch node {spec.name} exited at start; see {log}:\n{_tail(log)}")
        if health(spec.url, nodes=nodes) is not None:
            return time.monotonic() - started
        time.sleep(0.25)
    kill(info)
    raise LocalServerError(
        f"OpenSearch node {spec.name} was not healthy within {timeout:.0f} s; see {log}:\n{_tail(log)}"
    )


def _tail(log: Path, size: int = 3000) -> str:
    try:
        return log.read_text(errors="replace")[-size:]
    except OSError:
        return ""


def node_spec(state_dir: Path, name: str = "opensearch", *, settings: dict[str, Any] | None = None) -> NodeSpec:
    return NodeSpec(
        name=name,
        directory=str((state_dir / name).resolve()),
        http_port=free_port(),
        transport_port=free_port(),
        heap_mb=heap_mb(),
        settings=dict(settings or {}),
    )


def start_node(
    state_dir: Path,
    *,
    name: str = "opensearch",
    exit_with_parent: bool = False,
    settings: dict[str, Any] | None = None,
    timeout: float = START_TIMEOUT,
) -> ServerInfo:
    """One real OpenSearch node (a cluster of one), healthy: its ServerInfo."""
    spec = node_spec(state_dir, name, settings=settings)
    info = launch(spec, exit_with_parent=exit_with_parent)
    wait_healthy(info, spec, timeout=timeout)
    return info


def start_cluster(
    state_dir: Path,
    count: int = 3,
    *,
    exit_with_parent: bool = False,
    settings: dict[str, Any] | None = None,
    timeout: float = START_TIMEOUT * 2,
) -> list[ServerInfo]:
    """``count`` nodes (JVMs) forming one cluster, started side by side, healthy with all of them."""
    names = [f"node-{n}" for n in range(1, count + 1)]
    specs = [node_spec(state_dir, name, settings=settings) for name in names]
    ports = [spec.transport_port for spec in specs]
    for spec in specs:
        spec.cluster_transport_ports = ports
        spec.cluster_nodes = names
        spec.cluster_name = f"{CLUSTER_NAME}-{os.getpid()}"
    infos = [launch(spec, exit_with_parent=exit_with_parent) for spec in specs]
    try:
        for info, spec in zip(infos, specs, strict=True):
            wait_healthy(info, spec, nodes=count, timeout=timeout)
    except LocalServerError:
        for info in infos:
            kill(info)
        raise
    return infos


def spec_of(info: ServerInfo, state_dir: Path) -> NodeSpec:
    raw = json.loads((state_dir / info.name / "node.json").read_text())
    return NodeSpec(**raw)


def restart(
    info: ServerInfo, state_dir: Path, *, exit_with_parent: bool = False, nodes: int | None = None
) -> ServerInfo:
    """Start a stopped or killed node again with its data, ports and settings; healthy."""
    spec = spec_of(info, state_dir)
    again = launch(spec, exit_with_parent=exit_with_parent)
    wait_healthy(again, spec, nodes=nodes)
    return again


def kill(info: ServerInfo) -> None:
    """SIGKILL the node's JVM, as a crashed machine would lose it (no flush, no goodbye to the cluster)."""
    if info.pid and pid_alive(info.pid):
        with contextlib.suppress(OSError):
            os.killpg(info.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(info.pid, signal.SIGKILL)
        _reap(info.pid, 10.0)


def stop(info: ServerInfo, grace: float = 20.0) -> None:
    """Stop the node as an operator would (SIGTERM: it flushes and leaves the cluster), SIGKILL after ``grace``."""
    if not info.pid or not pid_alive(info.pid):
        return
    with contextlib.suppress(OSError):
        os.kill(info.pid, signal.SIGTERM)
    if not _reap(info.pid, grace):
        kill(info)


def _reap(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.05)
    return not pid_alive(pid)
