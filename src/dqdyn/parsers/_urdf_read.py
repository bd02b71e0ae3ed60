"""Reading a URDF document for `dqdyn.load_urdf`: the maintained parser ``urdf_parser_py``.

Only what dynamics needs reaches the parser: ``<link>`` (without ``<visual>`` / ``<collision>``)
and ``<joint>``; ``<material>``, ``<transmission>``, ``<gazebo>``, … are removed first (meshes
are never opened, ``package://`` URIs never resolved).  The prologue is normalised first as
``urdfdom`` and PyBullet read it (`_urdf_xml.normalize_prologue`).  Every failure is a
`URDFError` naming the file and the element; a repeated scalar element is a warning (the first
one is used), an unknown tag goes to the ``logging`` logger ``"dqdyn.parsers.urdf"`` at DEBUG
level.
"""

from __future__ import annotations

import os
import re
import threading
import warnings
from pathlib import Path

from dqdyn.errors import URDFError
from dqdyn.parsers._urdf_xml import log, normalize_prologue

# urdf_parser_py reports unknown tags through a module-level hook; swapping it is not thread safe
_PARSER_LOCK = threading.Lock()


# ----------------------------------------------------------------------------------- source
def read_source(source) -> tuple[bytes, str, str]:
    """``(xml bytes, label used in messages, default robot name)`` of a path or an XML string."""
    if isinstance(source, bytes):
        if source.lstrip().startswith(b"<"):
            return source.lstrip(), "<URDF string>", "robot"
        source = source.decode()
    if isinstance(source, str) and source.lstrip().startswith("<"):
        return source.lstrip().encode("utf-8"), "<URDF string>", "robot"
    if not isinstance(source, (str, os.PathLike)):
        raise URDFError(
            f"load_urdf: expected a file path or an XML string, got {type(source).__name__}"
        )
    if not str(source).strip():
        raise URDFError("load_urdf: path_or_xml is empty; give a URDF file path or XML string")
    path = Path(source)
    label = str(path)
    if not path.exists():
        raise URDFError(f"URDF file {label!r} does not exist")
    if path.is_dir():
        raise URDFError(f"URDF path {label!r} is a directory, not a file")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise URDFError(f"URDF file {label!r} cannot be read: {e.strerror or e}") from e
    return data, label, path.stem


# ----------------------------------------------------------------------------------- reading
_SEGMENT = re.compile(r"([A-Za-z_][\w\-]*)(?:\[@name='([^']*)'\])?(?:\[\d+\])?")


def _describe_path(path) -> str:
    """``"joint 'elbow' > limit"`` from an ``urdf_parser_py`` XPath-like path."""
    parts = []
    for tag, name in _SEGMENT.findall(str(path)):
        if tag == "robot":
            continue
        parts.append(f"{tag} {name!r}" if name else tag)
    return " > ".join(parts) if parts else "robot"


def _locate(root, exc) -> str:
    """``"link 'x' > inertial > mass: "`` for the element holding the bad value quoted in ``exc``
    (``urdf_parser_py`` does not wrap value errors of child elements with their path)."""
    m = re.search(r"'([^']*)'\s*$", str(exc))
    if not m:
        return ""
    bad = m.group(1)
    for el in root.iter():
        if isinstance(el.tag, str) and bad in el.attrib.values():
            parts = []
            while el is not None and el.tag != "robot":
                name = el.get("name") if el.tag in ("link", "joint") else None
                parts.append(f"{el.tag} {name!r}" if name else el.tag)
                el = el.getparent()
            return " > ".join(reversed(parts)) + ": "
    return ""


def _strip(root) -> None:
    """Remove what dynamics does not need (geometry, materials, transmissions, plugins)."""
    for child in list(root):
        if not isinstance(child.tag, str):  # comments, processing instructions
            continue
        if child.tag == "link":
            for sub in list(child):
                if isinstance(sub.tag, str) and sub.tag in ("visual", "collision"):
                    child.remove(sub)
        elif child.tag != "joint":
            root.remove(child)


def parse(data: bytes, label: str, default_name: str):
    """The document parsed by ``urdf_parser_py`` (its ``Robot``: ``.name``, ``.links``,
    ``.joints``); every failure is a `URDFError` naming ``label``."""
    import urdf_parser_py.xml_reflection.core as xcore
    from lxml import etree
    from urdf_parser_py.urdf import URDF

    parser = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=True,
                             huge_tree=True)
    try:
        root = etree.fromstring(normalize_prologue(data, label), parser)
    except etree.XMLSyntaxError as e:
        raise URDFError(f"URDF {label}: XML syntax error: {e}") from None
    if root is None or root.tag != "robot":
        tag = None if root is None else root.tag
        raise URDFError(f"URDF {label}: the root element must be <robot>, got <{tag}>")
    _strip(root)
    if "name" not in root.attrib:
        root.set("name", default_name)
    messages: list[str] = []
    with _PARSER_LOCK:
        saved = xcore.on_error
        xcore.on_error = messages.append
        try:
            robot = URDF.from_xml_string(etree.tostring(root))
        except xcore.ParseError as e:
            inner = e.e
            while isinstance(inner, xcore.ParseError):  # duck-typed parsing nests them
                inner = inner.e
            msg = str(inner).strip().splitlines()[0] if str(inner).strip() else type(inner).__name__
            raise URDFError(f"URDF {label}: {_describe_path(e.path)}: {msg}") from None
        except (ValueError, AssertionError, TypeError, KeyError) as e:
            raise URDFError(f"URDF {label}: {_locate(root, e)}{e}") from None
        finally:
            xcore.on_error = saved
    for m in messages:
        if "defined multiple times" in m:
            warnings.warn(f"URDF {label}: {m} (the first one is used)", UserWarning, stacklevel=3)
        else:
            log.debug("URDF %s: %s", label, m)
    return robot
