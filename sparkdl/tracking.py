"""MLflow tracking URIs, checked before anything is sent: the accepted forms, resolved, never echoing a password.

Accepted (anything else is one :class:`TrackingURIError` naming these forms):

* ``http://HOST[:PORT][/PATH]`` and ``https://...``: a tracking server. A user name or password in the
  URI is refused (it would be printed, logged and kept in the campaign's provenance): MLflow reads
  them from ``MLFLOW_TRACKING_USERNAME`` and ``MLFLOW_TRACKING_PASSWORD``.
* ``sqlite:////ABSOLUTE/FILE.db`` (four slashes) or ``sqlite:///FILE.db`` (three: relative to the
  campaign folder, never to the current folder). ``sqlite://`` and ``:memory:`` are refused: a
  database that vanishes when the export ends would report runs added to nothing.
* ``file:///ABSOLUTE/FOLDER`` or ``file:FOLDER`` (relative to the campaign folder): MLflow's file
  store (MLflow 3 keeps it in maintenance mode; the export opts in for a URI that names one).

A bare ``HOST:PORT`` (``127.0.0.1:5000``) or a bare path is refused with the form that was meant:
MLflow would silently take it for a file store folder named so in the current folder.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import SplitResult, urlsplit

from sparkdl.errors import ToolError

#: The longest URI accepted.
MAX_URI_CHARS = 2048
ACCEPTED = ("accepted: http://HOST[:PORT][/PATH], https://HOST[:PORT][/PATH], sqlite:////ABSOLUTE/FILE.db, "
            "sqlite:///FILE.db (in the campaign folder), file:///ABSOLUTE/FOLDER")
_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,252})", re.ASCII)
_HOST_PORT = re.compile(r"([A-Za-z0-9._-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\]):(\d{1,5})(/.*)?", re.ASCII | re.DOTALL)


class TrackingURIError(ToolError):
    """A tracking URI (``--mlflow``, ``--tracking-uri``, $MLFLOW_TRACKING_URI) is not one the export can use."""


def redact(uri: str) -> str:
    """``uri`` safe to print: any ``user:password@`` replaced by ``***@``, control characters escaped, cut at 200."""
    text = re.sub(r"(?<=//)[^/?#]*@", "***@", uri)
    head = re.split(r"[/?#]", text, maxsplit=1)[0]
    if "@" in head and "//" not in text:
        text = "***@" + text.split("@", 1)[1]  # no //: whatever precedes the '@' may be a password
    shown = text[:200].encode("unicode_escape").decode("ascii")
    return shown + ("..." if len(text) > 200 else "")


def _fail(uri: str, problem: str) -> TrackingURIError:
    return TrackingURIError(f"tracking URI {redact(uri)!r}: {problem}; {ACCEPTED}")


def _credentials(uri: str) -> TrackingURIError:
    return TrackingURIError(f"tracking URI {redact(uri)!r}: holds a user name or password, which would be printed "
                            "and kept in the campaign's provenance: remove it from the URI and set "
                            "MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD instead")


def _split(uri: str) -> SplitResult:
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number or out of range
    except ValueError as e:
        raise _fail(uri, f"not a URI ({e})") from None
    return parts


def _http(uri: str, parts: SplitResult) -> str:
    if "@" in parts.netloc:
        raise _credentials(uri)
    host = parts.hostname or ""
    if not host:
        raise _fail(uri, "no host")
    if ":" not in host and not _HOST.fullmatch(host):
        raise _fail(uri, f"{host[:80]!r} is not a host name")
    if parts.port == 0:
        raise _fail(uri, "port 0: give a port from 1 to 65535")
    if parts.query or parts.fragment or uri.rstrip().endswith(("?", "#")):
        raise _fail(uri, "a tracking URI has no ?query or #fragment")
    return uri.rstrip("/")


def _resolved(path: str, base: Path | None, uri: str, kind: str) -> Path | None:
    """The absolute path of a store (None when relative and there is no campaign folder yet to resolve it in)."""
    p = Path(path)
    if len(path) > 4096 or any(len(part.encode(errors="surrogateescape")) > 255 for part in p.parts):
        raise _fail(uri, f"the {kind} path is too long")
    if p.is_absolute():
        return p
    if base is None:
        return None
    return Path(base).absolute() / p


def _sqlite(uri: str, parts: SplitResult, base: Path | None) -> str:
    if not uri.startswith("sqlite://") or parts.netloc:
        raise _fail(uri, "a SQLite store is written sqlite:///FILE.db or sqlite:////ABSOLUTE/FILE.db")
    if parts.query or parts.fragment:
        raise _fail(uri, "a tracking URI has no ?query or #fragment")
    path = parts.path[1:] if parts.path.startswith("/") else parts.path
    if not path or path == ":memory:" or path.startswith("file::memory:"):
        raise _fail(uri, "an in-memory SQLite database vanishes when the export ends: name a file")
    if path.endswith("/"):
        raise _fail(uri, "the SQLite store is a folder: name a file, e.g. sqlite:///mlflow.db")
    resolved = _resolved(path, base, uri, "SQLite")
    return uri if resolved is None else f"sqlite:///{resolved}"


def _file(uri: str, parts: SplitResult, base: Path | None) -> str:
    if parts.netloc not in ("", "localhost"):
        raise _fail(uri, "a file store is on this machine: file:///ABSOLUTE/FOLDER, not on another host")
    if parts.query or parts.fragment:
        raise _fail(uri, "a tracking URI has no ?query or #fragment")
    if not parts.path:
        raise _fail(uri, "no folder: name one, e.g. file:///ABSOLUTE/mlruns")
    if parts.path.startswith("//"):  # file://localhost//x: a network path's form, not a folder of this machine
        raise _fail(uri, "a file store is file:///ABSOLUTE/FOLDER (one slash before the folder)")
    resolved = _resolved(parts.path, base, uri, "file store")
    return uri if resolved is None else f"file://{resolved}"


def tracking_uri(text: str, base: Path | None = None) -> str:
    """``text`` checked (see the module doc) and, with ``base`` (the campaign folder), its store path made absolute.

    Without ``base`` a relative SQLite or file store path is checked but left as written (the export
    resolves it in its campaign folder). Raises :class:`TrackingURIError` naming the accepted forms.
    """
    uri = text.strip()
    if not uri:
        raise _fail(uri, "empty")
    if len(uri) > MAX_URI_CHARS:
        raise _fail(uri, f"{len(uri)} characters: at most {MAX_URI_CHARS}")
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in uri):
        raise _fail(uri, "holds a space or a control character")
    if "\\" in uri or any(0xD800 <= ord(c) <= 0xDFFF for c in uri):
        raise _fail(uri, "holds a backslash or a character that is not text")
    rest = uri.split("//", 1)[1] if "//" in uri else uri
    store = uri.lower().startswith(("sqlite:", "file:"))  # their '@' is a file name's
    if not store and "@" in re.split(r"[/?#]", rest, maxsplit=1)[0]:
        raise _credentials(uri)
    if store and ("?" in uri or "#" in uri):
        raise _fail(uri, "a tracking URI has no ?query or #fragment")
    bare = _HOST_PORT.fullmatch(uri)
    if bare and int(bare.group(2)) <= 65535:
        raise _fail(uri, f"no scheme: did you mean http://{redact(uri)}?")
    parts = _split(uri)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        return _http(uri, parts)
    if scheme == "sqlite":
        return _sqlite(uri, parts, base)
    if scheme == "file":
        return _file(uri, parts, base)
    if not scheme:
        raise _fail(uri, "no scheme (a bare path would be a file store in the current folder)")
    raise _fail(uri, f"scheme {scheme[:20]!r} is not one the export writes to")


def is_http(uri: str) -> bool:
    return uri.lower().startswith(("http://", "https://"))


def store_path(uri: str) -> Path | None:
    """The file of a ``sqlite:`` URI or the folder of a ``file:`` URI already resolved by :func:`tracking_uri`."""
    parts = urlsplit(uri)
    if parts.scheme.lower() == "sqlite":
        return Path(parts.path[1:])
    if parts.scheme.lower() == "file":
        return Path(parts.path)
    return None
