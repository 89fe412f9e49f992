"""Start, find and stop the embedded local servers (moto server, the Converse and gateway stand-ins; osmem-server
for the benches that compare with it; the OpenSearch node itself is devkit.opensearch's).

They run as background processes that outlive the ``docindex local up``
command; their addresses and pids are kept in ``<state dir>/servers.json`` so
a second ``up`` reuses them and ``down`` stops them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess  # starts the local servers with fixed argv  # nosec B404
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from devkit.local.motoserver import EXIT_WITH_PARENT_ENV


class LocalServerError(RuntimeError):
    """A local server could not be started."""


@dataclass
class ServerInfo:
    name: str
    url: str
    pid: int | None  # None when docindex did not start it


def serve_until_terminated(stop: Callable[[], None]) -> None:
    """Block a server's foreground process until SIGTERM (``stop``) or Ctrl-C, then call ``stop``."""
    import threading

    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        stopped.wait()
    except KeyboardInterrupt:
        pass
    finally:
        stop()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def responds(url: str, path: str = "/", timeout: float = 2.0) -> bool:
    """True when something answers HTTP at ``url`` (any status)."""
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"not an http(s) URL: {url!r}")
    try:
        with urllib.request.urlopen(url.rstrip("/") + path, timeout=timeout):  # noqa: S310  # scheme checked  # nosec B310
            return True
    except urllib.error.HTTPError:
        return True
    except (urllib.error.URLError, OSError):
        return False


def pid_alive(pid: int | None) -> bool:
    """Whether process ``pid`` runs: it exists and has not exited.

    A server ``docindex local up`` left running is re-parented when ``up`` exits; once stopped it
    stays a zombie until its new parent reaps it, which an init may do only every second or two
    (here: 1.6-1.7 s). ``kill(pid, 0)`` still succeeds on a zombie, so without the state check
    ``stop`` waited for the reaper: ~2 s per server, 8 s per ``docindex local down``.
    """
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return True  # no procfs (not Linux): kill(pid, 0) is all there is to go on
    return stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]


def _wait_until(url: str, path: str, process: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LocalServerError(f"server exited at start; see {log}:\n{log.read_text()[-2000:]}")
        if responds(url, path, timeout=1.0):
            return
        time.sleep(0.1)
    process.kill()
    raise LocalServerError(f"server at {url} did not answer within {timeout:.0f} s; see {log}")


def _launch(
    name: str,
    argv: list[str],
    state_dir: Path,
    port: int,
    *,
    ready: str = "/",
    timeout: float = 30,
    env: dict[str, str] | None = None,
) -> ServerInfo:
    """Start a server in its own session, logging to ``<state_dir>/<name>.log``; once ``ready`` answers."""
    log = state_dir / f"{name}.log"
    with log.open("ab") as out:
        process = subprocess.Popen(  # noqa: S603  # fixed argv: our interpreter or a shipped binary  # nosec B603
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    _wait_until(url, ready, process, log, timeout=timeout)
    return ServerInfo(name, url, process.pid)


def start_moto(state_dir: Path, port: int | None = None, *, exit_with_parent: bool = False) -> ServerInfo:
    """moto in server mode: every AWS API docindex uses, over real HTTP, in its own process.

    The one way the dev kit, the tests, the soak and the bench start moto: the
    server of ``devkit.local.motoserver`` (moto's, with two SQS look-ups made
    cheap), logging to ``<state_dir>/moto.log``. In its own process it never
    competes with the caller for the GIL, and the soak's killed processes
    cannot take it down. It runs in its own session, so ``docindex local up``
    can leave it running; ``exit_with_parent`` makes it exit once the calling
    process is gone instead (tests, soak, bench: nothing outlives them).
    """
    port = port or free_port()
    env = {**os.environ}
    env.pop(EXIT_WITH_PARENT_ENV, None)
    if exit_with_parent:
        env[EXIT_WITH_PARENT_ENV] = str(os.getpid())
    argv = [sys.executable, "-m", "devkit.local.motoserver", "-H", "127.0.0.1", "-p", str(port)]
    return _launch("moto", argv, state_dir, port, ready="/moto-api/", env=env)


def start_osmem(state_dir: Path, port: int | None = None) -> ServerInfo:
    """osmem-server: in-memory OpenSearch with kuromoji, bulk and external versioning, no k-NN (the benches'
    keyword-only comparison engine: bench.local.servers_running)."""
    from osmem_server import resolve_binary

    port = port or free_port()
    return _launch("osmem", [resolve_binary(), "--addr", f"127.0.0.1:{port}", "--no-stdin-watch"], state_dir, port)


def start_converse(state_dir: Path, port: int | None = None) -> ServerInfo:
    """The Converse stand-in (devkit.local.converse): ANSWERS=bedrock without Bedrock."""
    port = port or free_port()
    argv = [sys.executable, "-m", "devkit.local.converse", "--port", str(port)]
    return _launch("converse", argv, state_dir, port)


def start_gateway(state_dir: Path, env_file: Path, port: int | None = None) -> ServerInfo:
    """The local API Gateway + sign-in stand-in serving the search API and page (devkit.local.gateway)."""
    port = port or free_port()
    argv = [sys.executable, "-m", "devkit.local.gateway", "--env-file", str(env_file), "--port", str(port)]
    return _launch("gateway", argv, state_dir, port, ready="/config.json", timeout=60)


def stop(info: ServerInfo, grace: float = 5.0) -> None:
    """Stop a server docindex started (SIGTERM, then SIGKILL)."""
    if not info.pid or not pid_alive(info.pid):
        return
    with contextlib.suppress(OSError):
        os.kill(info.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while pid_alive(info.pid) and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(info.pid, os.WNOHANG)
        time.sleep(0.05)
    if pid_alive(info.pid):
        with contextlib.suppress(OSError):
            os.kill(info.pid, signal.SIGKILL)


def load_servers(state_dir: Path) -> dict[str, ServerInfo]:
    path = state_dir / "servers.json"
    if not path.exists():
        return {}
    raw = json.loads(path.read_text())
    return {name: ServerInfo(**info) for name, info in raw.items()}


def save_servers(state_dir: Path, servers: dict[str, ServerInfo]) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / "servers.json"
    path.write_text(json.dumps({n: asdict(s) for n, s in servers.items()}, indent=2) + "\n")
