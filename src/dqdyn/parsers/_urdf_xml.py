"""Reading URDF documents as the world writes them: the XML prologue, and XML errors as
`URDFError` naming the file and the line.

Many URDFs in circulation (PyBullet's ``pybullet_data`` among them) open with
``<?xml version="0.0"?>``, or with blank lines before the declaration.  An XML 1.0 parser
refuses both (libxml2: *Unsupported version '0.0'*; expat: *XML declaration not at start of
entity*); ``urdfdom`` (tinyxml, used by Pinocchio and ROS) and PyBullet accept them.  So does
dqdyn: `normalize_prologue` rewrites the declaration to ``version="1.0"`` (its
``encoding`` kept) at the start of the document, with the same number of line breaks after it,
so that line numbers in messages are those of the file.
"""

from __future__ import annotations

import logging
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from dqdyn.errors import URDFError

log = logging.getLogger("dqdyn.parsers.urdf")

_BOM = b"\xef\xbb\xbf"
_DECL = re.compile(rb"^(\s*)<\?xml\b(.*?)\?>", re.S)
_VERSION = re.compile(rb"""version\s*=\s*["']([^"']*)["']""")
_ENCODING = re.compile(rb"""encoding\s*=\s*["'][^"']*["']""")


def normalize_prologue(data: bytes, label: str = "<URDF string>") -> bytes:
    """``data`` with its XML declaration (if any) made acceptable to an XML 1.0 parser: moved to
    the very start (after a UTF-8 byte order mark) and given ``version="1.0"``; the document's
    line numbering is unchanged.  Anything else is returned as is."""
    bom = _BOM if data.startswith(_BOM) else b""
    body = data[len(bom):]
    m = _DECL.match(body)
    if m is None:
        return data
    lead, attrs = m.group(1), m.group(2)
    v = _VERSION.search(attrs)
    if not lead and v is not None and v.group(1) == b"1.0":
        return data
    enc = _ENCODING.search(attrs)
    decl = b'<?xml version="1.0"' + (b" " + enc.group(0) if enc else b"") + b"?>"
    breaks = m.group(0).count(b"\n")  # (those before and inside the declaration)
    log.debug("URDF %s: XML declaration %r read as XML 1.0", label, m.group(0).strip()[:60])
    return bom + decl + b"\n" * breaks + body[m.end():]


def read_bytes(source, what: str = "URDF") -> tuple[bytes, str]:
    """``(document bytes, label)`` of a file path or an XML string / bytes (starting with ``<``)."""
    if isinstance(source, bytes):
        if source.lstrip().startswith(b"<"):
            return source, f"<{what} string>"
        source = source.decode()
    if isinstance(source, str) and source.lstrip().startswith("<"):
        return source.encode("utf-8"), f"<{what} string>"
    if not isinstance(source, (str, os.PathLike)):
        raise URDFError(f"{what}: expected a file path or an XML string, got {type(source).__name__}")
    path = Path(source)
    try:
        return path.read_bytes(), str(path)
    except OSError as e:
        raise URDFError(f"{what} file {str(path)!r} cannot be read: {e.strerror or e}") from None


def etree_root(source, what: str = "URDF") -> ET.Element:
    """The root element (``xml.etree``) of a URDF file path or XML string, the prologue read as
    `normalize_prologue` does; a malformed document raises `URDFError` naming the
    file and the line (never ``xml.etree.ElementTree.ParseError``)."""
    data, label = read_bytes(source, what)
    data = normalize_prologue(data, label)
    try:
        return ET.fromstring(data)
    except ET.ParseError as e:
        line, col = getattr(e, "position", (None, None))
        msg = str(e).split(":")[0]
        raise URDFError(f"{what} {label}: XML syntax error: {msg} (line {line}, column {col})") from None
