"""One loader for every way a robot is named: `load`.

>>> import dqdyn
>>> dqdyn.load("jaco6").nv
6

``load(source)`` accepts, in this order:

1. **A file** — a path (``str`` or `os.PathLike`) to a URDF or an MJCF file.  The format
   is told by the extension (``.urdf`` → `load_urdf`, ``.mjcf`` →
   `load_mjcf`) or, for ``.xml`` and any other name, by the document's root element
   (``<robot>`` → URDF, ``<mujoco>`` → MJCF).  An XML string (starting with ``<``) is read the
   same way.  A folder is read as a Menagerie model folder (see 3).
2. **A dqdyn or example-robot-data name** — a name of `list_models` whose kind is
   ``"model"`` (``"jaco6"``, ``"panda"``, ``"ur5"``, ``"talos"``), loaded by
   `load_example`.
3. **A MuJoCo Menagerie name** — a model folder of a `MuJoCo Menagerie
   <https://github.com/google-deepmind/mujoco_menagerie>`_ checkout (``"franka_emika_panda"``,
   ``"universal_robots_ur5e"``, ``"unitree_go2"``) or a file in it
   (``"franka_emika_panda/scene.xml"``, ``"franka_emika_panda/panda_nohand"``).  The checkout is
   the ``menagerie=`` argument, else the environment variable ``DQDYN_MENAGERIE``, else the copy
   that ``robot_descriptions`` keeps in its cache (``$ROBOT_DESCRIPTIONS_CACHE/mujoco_menagerie``,
   by default ``~/.cache/robot_descriptions/mujoco_menagerie``).  In a model folder the robot
   file is preferred to the scene: ``<robot>.xml`` named after the end of the folder name
   (``panda.xml``, ``ur5e.xml``, ``go2.xml``), else the file that ``scene.xml`` includes, else
   the only other ``.xml`` file, else ``scene.xml`` (a scene adds a floor and lights, which do
   not change the dynamics).
4. **A robot_descriptions name** — when the optional package ``robot_descriptions`` is
   installed: its module ``robot_descriptions.<name>`` (``"panda_mj_description"``,
   ``"ur5e_description"``; ``"panda_mj"`` is short for ``"panda_mj_description"``), whose
   ``MJCF_PATH`` or ``URDF_PATH`` is loaded (a Xacro-only description is rendered by
   ``robot_descriptions`` itself, which needs ``xacrodoc``).  ``robot_descriptions`` downloads the
   description's repository on first use.

Anything else raises one `UnknownNameError` that says what was looked up
and where, with the nearest known names ("did you mean …").
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import os
import pkgutil
import re
from pathlib import Path

from dqdyn.errors import DqdynError, MissingExtraError, MJCFError, ModelError, UnknownNameError, URDFError

__all__ = ["load", "menagerie_dir", "menagerie_robot_file"]

MENAGERIE_ENV = "DQDYN_MENAGERIE"
RD_INSTALL = "pip install robot_descriptions"
_RD_SUFFIX = "_description"
_SNIFF_BYTES = 1 << 20
_BOM = b"\xef\xbb\xbf"
# what may precede the root element: XML declaration / processing instructions, comments,
# a document type declaration (with an internal subset), white space
_LEAD = re.compile(rb"\s*(?:<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>\[]*(?:\[.*?\])?\s*>)", re.S)
_TAG = re.compile(rb"\s*<([A-Za-z_][\w.:-]*)")
_INCLUDE = re.compile(r"""<include\s[^>]*?file\s*=\s*["']([^"']+)["']""")


# --------------------------------------------------------------------------------- files
def _root_tag(data: bytes) -> str | None:
    """Local name of the document's root element, or ``None`` when there is none to be seen."""
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    pos = 0
    while (m := _LEAD.match(data, pos)) is not None:
        pos = m.end()
    m = _TAG.match(data, pos)
    return m.group(1).decode("ascii", "replace").split(":")[-1] if m else None


def _check_options(fn, options: dict, what: str, err) -> None:
    params = inspect.signature(fn).parameters
    allowed = [p for i, p in enumerate(params) if i > 0 and
               params[p].kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                  inspect.Parameter.KEYWORD_ONLY)]
    bad = [k for k in options if k not in allowed]
    if bad:
        raise err(f"load: option(s) {', '.join(map(repr, bad))} do not apply to {what} (read by "
                  f"{fn.__name__}); its options are: {', '.join(allowed)}")


def _load_urdf(source, options: dict, what: str):
    from dqdyn.parsers.urdf import load_urdf

    _check_options(load_urdf, options, what, URDFError)
    return load_urdf(source, **options)


def _load_mjcf(source, options: dict, what: str):
    from dqdyn.parsers.mjcf import load_mjcf

    _check_options(load_mjcf, options, what, MJCFError)
    return load_mjcf(source, **options)


def _format_of(path: Path) -> str:
    """``"urdf"`` or ``"mjcf"``: by the extension, else by the root element."""
    ext = path.suffix.lower()
    if ext == ".urdf":
        return "urdf"
    if ext == ".mjcf":
        return "mjcf"
    if ext == ".xacro":
        raise URDFError(f"load: {str(path)!r} is a Xacro template, not a URDF; render it first "
                        "(xacro, or the xacrodoc package) and load the .urdf it makes")
    try:
        with open(path, "rb") as f:
            head = f.read(_SNIFF_BYTES)
    except OSError as e:
        raise DqdynError(f"load: file {str(path)!r} cannot be read: {e.strerror or e}") from e
    tag = _root_tag(head)
    if tag == "robot":
        return "urdf"
    if tag == "mujoco" or ext == ".xml":  # MuJoCo's own message names what is wrong with it
        return "mjcf"
    raise DqdynError(
        f"load: cannot tell the format of {str(path)!r}: its root element is "
        f"{'<' + tag + '>' if tag else 'not XML'}, expected <robot> (URDF) or <mujoco> (MJCF)")


def _load_file(path: Path, options: dict):
    if path.is_dir():
        path = menagerie_robot_file(path)
    fmt = _format_of(path)
    what = f"the {fmt.upper()} file {str(path)!r}"
    return (_load_urdf if fmt == "urdf" else _load_mjcf)(path, options, what)


def _load_xml_string(xml: str, options: dict):
    tag = _root_tag(xml.lstrip().encode("utf-8"))
    if tag == "robot":
        return _load_urdf(xml, options, "a URDF string")
    if tag == "mujoco":
        return _load_mjcf(xml, options, "an MJCF string")
    raise DqdynError(f"load: the XML string's root element is <{tag}>, expected <robot> (URDF) "
                     "or <mujoco> (MJCF)")


# ----------------------------------------------------------------------------- Menagerie
def menagerie_dir(menagerie=None) -> Path | None:
    """The MuJoCo Menagerie checkout `load` searches, or ``None``.

    ``menagerie`` (a path) if given, else ``$DQDYN_MENAGERIE``, else robot_descriptions' cached
    copy (``$ROBOT_DESCRIPTIONS_CACHE/mujoco_menagerie``, default
    ``~/.cache/robot_descriptions/mujoco_menagerie``) when it exists.

    Raises
    ------
    DqdynError
        ``menagerie`` or ``$DQDYN_MENAGERIE`` is not an existing folder.
    """
    if menagerie is not None:
        if not isinstance(menagerie, (str, os.PathLike)):
            raise DqdynError(f"load: menagerie must be the path of a MuJoCo Menagerie checkout, "
                             f"got {type(menagerie).__name__}")
        p = Path(menagerie).expanduser()
        if not p.is_dir():
            raise DqdynError(f"load: menagerie={str(menagerie)!r} is not a folder (expected the "
                             "path of a MuJoCo Menagerie checkout)")
        return p
    env = os.environ.get(MENAGERIE_ENV)
    if env:
        p = Path(env).expanduser()
        if not p.is_dir():
            raise DqdynError(f"load: ${MENAGERIE_ENV}={env!r} is not a folder (expected the path "
                             "of a MuJoCo Menagerie checkout)")
        return p
    cache = Path(os.environ.get("ROBOT_DESCRIPTIONS_CACHE", "~/.cache/robot_descriptions"))
    p = cache.expanduser() / "mujoco_menagerie"
    return p if p.is_dir() else None


def _included(scene: Path) -> list[str]:
    try:
        text = scene.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return _INCLUDE.findall(text)


def menagerie_robot_file(folder) -> Path:
    """The robot file of a Menagerie model folder (see `load`, step 3).

    Raises
    ------
    UnknownNameError
        The folder holds no ``.xml`` file, or several robot files and no rule picks one (the
        message lists them).
    """
    folder = Path(folder)
    xmls = sorted(p.name for p in folder.glob("*.xml") if p.is_file())
    if not xmls:
        raise UnknownNameError(f"load: folder {str(folder)!r} holds no .xml (MJCF) file")
    tokens = folder.name.split("_")
    for k in range(1, len(tokens) + 1):  # panda.xml in franka_emika_panda, ur5e.xml, go2.xml
        cand = "_".join(tokens[-k:]) + ".xml"
        if cand in xmls and not cand.startswith("scene"):
            return folder / cand
    scenes = [x for x in xmls if x.startswith("scene")]
    inc = {i for s in scenes for i in _included(folder / s)}
    inc = sorted(i for i in inc if (folder / i).is_file() and not Path(i).name.startswith("scene"))
    if len(inc) == 1:
        return folder / inc[0]
    others = [x for x in xmls if x not in scenes]
    if len(others) == 1:
        return folder / others[0]
    if "scene.xml" in xmls:
        return folder / "scene.xml"
    raise UnknownNameError(
        f"load: folder {str(folder)!r} holds several models and none is its robot file by name; "
        f"name one: {', '.join(folder.name + '/' + x for x in xmls)}")


def _menagerie_file(root: Path, name: str) -> Path | None:
    rel = Path(name)
    if rel.is_absolute() or ".." in rel.parts:
        return None
    p = root / rel
    if p.is_dir():
        return menagerie_robot_file(p)
    if p.is_file():
        return p
    if not p.suffix and p.with_suffix(".xml").is_file():
        return p.with_suffix(".xml")
    return None


def _menagerie_names(root: Path | None) -> list[str]:
    if root is None:
        return []
    try:
        return sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.xml")))
    except OSError:
        return []


# ---------------------------------------------------------------------- robot_descriptions
def _rd_installed() -> bool:
    try:
        return importlib.util.find_spec("robot_descriptions") is not None
    except (ImportError, ValueError):
        return False


def _rd_names() -> list[str]:
    """Module names of the installed robot_descriptions (none imported, nothing downloaded)."""
    try:
        pkg = importlib.import_module("robot_descriptions")
    except Exception:  # noqa: BLE001 - a broken install lists nothing
        return []
    return sorted(m.name for m in pkgutil.iter_modules(getattr(pkg, "__path__", []))
                  if m.name.endswith(_RD_SUFFIX) and not m.name.startswith("_"))


def _rd_candidates(name: str) -> list[str]:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return []
    return [name] if name.endswith(_RD_SUFFIX) else [name + _RD_SUFFIX, name]


def _rd_module(name: str):
    """The robot_descriptions module of ``name`` (imported: it may download), or ``None``."""
    for cand in _rd_candidates(name):
        full = f"robot_descriptions.{cand}"
        try:
            spec = importlib.util.find_spec(full)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            continue
        try:
            return importlib.import_module(full)
        except Exception as e:  # noqa: BLE001 - its download failed, or a dependency is missing
            raise DqdynError(f"load: robot_descriptions could not provide {cand!r}: "
                             f"{type(e).__name__}: {e}") from e
    return None


def _rd_load(mod, options: dict):
    cand = mod.__name__.rsplit(".", 1)[-1]
    order = ("MJCF_PATH", "URDF_PATH") if "_mj_" in cand + "_" else ("URDF_PATH", "MJCF_PATH")
    for attr in order:
        path = getattr(mod, attr, None)
        if path:
            p = Path(path)
            if not p.is_file():
                raise UnknownNameError(f"load: robot_descriptions' {cand}.{attr} is {str(p)!r}, "
                                       "which does not exist")
            fmt = "urdf" if attr == "URDF_PATH" else "mjcf"
            what = f"the {fmt.upper()} file of robot_descriptions' {cand} ({str(p)!r})"
            return (_load_urdf if fmt == "urdf" else _load_mjcf)(p, options, what)
    if getattr(mod, "XACRO_PATH", None):
        try:
            from robot_descriptions._xacro import get_urdf_path  # type: ignore
        except ImportError as e:
            raise MissingExtraError(f"load: robot_descriptions' {cand} is a Xacro template and "
                                    "this robot_descriptions cannot render it; update it "
                                    f"({RD_INSTALL} --upgrade)") from e
        try:
            path = get_urdf_path(mod)
        except ImportError as e:
            raise MissingExtraError(f"load: robot_descriptions' {cand} is a Xacro template, "
                                    f"rendered with xacrodoc: pip install xacrodoc ({e})") from e
        except Exception as e:  # noqa: BLE001
            raise URDFError(f"load: robot_descriptions could not render the Xacro template of "
                            f"{cand}: {type(e).__name__}: {e}") from e
        return _load_urdf(Path(path), options, f"the URDF rendered from {cand}")
    raise UnknownNameError(f"load: robot_descriptions' {cand} has no MJCF_PATH, URDF_PATH or "
                           "XACRO_PATH")


# --------------------------------------------------------------------------------- names
def _load_registered(name: str, options: dict):
    from dqdyn import models

    e = models.model_info(name)
    if e.kind != "model":
        returns = models._RETURNS[e.kind]
        raise ModelError(f"load: {name!r} is a {e.kind} robot, not a Model; load it with "
                         f"dqdyn.{e.loader}({name!r}), which returns {returns}")
    if e.target.startswith(("file:", "erd:")):
        from dqdyn.parsers.urdf import load_urdf

        _check_options(load_urdf, options, f"{name!r} (a URDF model)", URDFError)
    else:
        mod, fn = e.target[3:].split(":")
        _check_options(getattr(importlib.import_module(mod), fn), options,
                       f"{name!r} (built in code)", DqdynError)
    return models.load_example(name, **options)


def _known_names(root: Path | None) -> list[str]:
    from dqdyn import models

    names = set(models.list_models()) | set(models._ERD)
    names.update(_menagerie_names(root))
    for m in _rd_names():
        names.add(m)
        names.add(m[: -len(_RD_SUFFIX)])
    return sorted(names)


def _not_found(name: str, root: Path | None, pending: Exception | None):
    looked = ["no such file" + ("" if os.path.isabs(name) else f" (relative to {os.getcwd()})"),
              "not a model of dqdyn or example-robot-data (dqdyn.list_models())"]
    notes = []
    if root is None:
        notes.append(f"no MuJoCo Menagerie checkout to search (pass menagerie=<path> or set "
                     f"${MENAGERIE_ENV})")
    else:
        looked.append(f"not a model of the MuJoCo Menagerie checkout {str(root)!r}")
    if _rd_installed():
        looked.append("not a robot_descriptions module")
    else:
        notes.append(f"robot_descriptions is not installed ({RD_INSTALL})")
    if pending is not None:
        notes.append(str(pending))
    known = _known_names(root)
    key = name.split("/")[0] if root is not None and "/" in name else name
    close = difflib.get_close_matches(key, known, n=5, cutoff=0.6)
    if not close:
        low = {k.lower(): k for k in known}
        close = [low[c] for c in difflib.get_close_matches(key.lower(), list(low), n=5,
                                                           cutoff=0.6)]
    msg = f"load: {name!r}: " + "; ".join(looked)
    if close:
        msg += f". Did you mean {', '.join(map(repr, close))}?"
    if notes:
        msg += " (" + "; ".join(notes) + ")"
    if isinstance(pending, MissingExtraError) or (
            (name.endswith(_RD_SUFFIX) or name.endswith("_mj")) and not _rd_installed()):
        return MissingExtraError(msg)
    return UnknownNameError(msg)


def load(source, *, menagerie=None, **options):
    """A `Model` of a robot named any way users name one (see the module doc).

    >>> import dqdyn
    >>> dqdyn.load("two_link_arm").nv
    2
    >>> dqdyn.load("franka_emika_panda", menagerie="~/mujoco_menagerie")  # doctest: +SKIP
    >>> dqdyn.load("panda_mj_description")  # doctest: +SKIP

    Parameters
    ----------
    source:
        A path to a URDF or MJCF file (or a model folder), an XML string, a name of
        `list_models`, a MuJoCo Menagerie name (``"franka_emika_panda"``,
        ``"universal_robots_ur5e/scene.xml"``) or a robot_descriptions name
        (``"panda_mj_description"``, ``"panda_mj"``).
    menagerie:
        Path of a MuJoCo Menagerie checkout (default: ``$DQDYN_MENAGERIE``, else
        robot_descriptions' cached copy).
    **options:
        Passed to the loader of the file: `load_urdf` (``root_joint=``,
        ``mimic=``, ``gravity=``, ``name=``, …), `load_mjcf` (``ignore=``,
        ``name=``, ``return_info=``) or `load_example`.

    Returns
    -------
    Model
        (``(Model, MJCFInfo)`` for an MJCF source with ``return_info=True``.)

    Raises
    ------
    UnknownNameError
        ``source`` is none of the above; the message says where it was looked up and
        suggests the nearest known names.
    MissingExtraError
        ``source`` names a robot of example-robot-data or robot_descriptions, which is not
        installed; the message says what to ``pip install``.
    URDFError, MJCFError
        The file cannot be read, or an option does not apply to its loader.
    DqdynError
        ``source`` names a constrained or parallel robot (`ModelError`; use
        `load_constrained_example` or `load_parallel_example`),
        ``menagerie`` is not a folder, or robot_descriptions could not download the robot.
    """
    if isinstance(source, bytes):
        source = source.decode("utf-8", "replace") if source.lstrip().startswith(b"<") else \
            os.fsdecode(source)
    if not isinstance(source, (str, os.PathLike)):
        raise DqdynError(f"load: source must be a file path or a robot name (str), got "
                         f"{type(source).__name__}")
    if isinstance(source, str):
        if source.lstrip().startswith("<"):
            return _load_xml_string(source, options)
        if not source.strip():
            raise UnknownNameError("load: source is empty; give a file path or a robot name")
    path = Path(os.fspath(source)).expanduser()
    if path.exists():
        return _load_file(path, options)
    root = menagerie_dir(menagerie)
    if not isinstance(source, str):
        raise _not_found(os.fspath(source), root, None)
    name = source.strip()
    pending: Exception | None = None
    from dqdyn import models

    registered = False
    try:
        models.model_info(name)
        registered = True
    except MissingExtraError as e:  # an example-robot-data name without the package
        pending = e
    except UnknownNameError:
        pass
    if registered:
        return _load_registered(name, options)
    if root is not None:
        f = _menagerie_file(root, name)
        if f is not None:
            return _load_file(f, options)
    if _rd_installed():
        try:
            mod = _rd_module(name)
        except DqdynError as e:
            if not isinstance(pending, MissingExtraError):
                raise
            # an example-robot-data name: installing that package is the way that works offline
            raise MissingExtraError(f"{pending}; {e}") from e
        if mod is not None:
            return _rd_load(mod, options)
    raise _not_found(name, root, pending)
