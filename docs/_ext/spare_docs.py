"""The site's own checks, on top of ``sphinx -W`` (every warning is an error).

* **Public names are documented.** Every name in the ``__all__`` of each module of
  ``spare_docs_public_modules`` must have a reference entry, and every entry of those modules
  (the names and their members) must say something: a docstring, a ``#:`` comment for data, or
  text in the page. An entry whose only text is autodoc's "alias of ..." counts as empty.
* **References resolve.** A Python reference that Sphinx cannot resolve is tried against what it
  names in the package: a name that is documented under a public alias (a class defined in a
  private module and exported by ``spare_fast``, say) links there; a name that exists but has
  no page of its own (a private helper, a submodule) is shown as plain text; a name that does
  not exist stays a warning, which ``nitpicky`` and ``-W`` turn into an error.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re
import sys
from enum import Enum
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.ext.autodoc.mock import mock
from sphinx.pycode import ModuleAnalyzer
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

_ALIAS_PREFIX = "alias of"
_FIELD = object()  # what _lookup returns for a field that has no class attribute
_NAME = re.compile(r"^~?[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def _has_text(content: nodes.Element) -> bool:
    for child in content.children:
        if isinstance(child, addnodes.desc):
            continue  # a member's own entry
        text = child.astext().strip()
        if text and not text.startswith(_ALIAS_PREFIX):
            return True
    return False


def _record_entries(app: Sphinx, doctree: nodes.document) -> None:
    env = app.env
    entries: dict[str, tuple[str, bool]] = getattr(env, "spare_docs_entries", {})
    env.spare_docs_entries = entries  # type: ignore[attr-defined]
    for desc in doctree.findall(addnodes.desc):
        if desc.get("domain") != "py" or desc.get("no-index") or desc.get("noindex"):
            continue
        content = next(iter(desc.findall(addnodes.desc_content)), None)
        has_text = content is not None and _has_text(content)
        for sig in desc.findall(addnodes.desc_signature):
            module, fullname = sig.get("module"), sig.get("fullname")
            if not fullname:
                continue
            name = f"{module}.{fullname}" if module else fullname
            entries[name] = (env.docname, has_text)


def _purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    entries = getattr(env, "spare_docs_entries", {})
    for name in [n for n, (doc, _) in entries.items() if doc == docname]:
        del entries[name]


def _merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: Any) -> None:
    entries = getattr(env, "spare_docs_entries", {})
    entries.update(getattr(other, "spare_docs_entries", {}))
    env.spare_docs_entries = entries  # type: ignore[attr-defined]


def _check_public_names(app: Sphinx, env: BuildEnvironment) -> None:
    with mock(app.config.autodoc_mock_imports):
        _check_public(app, env)


def _check_public(app: Sphinx, env: BuildEnvironment) -> None:
    entries: dict[str, tuple[str, bool]] = getattr(env, "spare_docs_entries", {})
    modules: list[str] = app.config.spare_docs_public_modules
    for modname in modules:
        module = importlib.import_module(modname)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.ismodule(obj):
                if not inspect.getdoc(obj):
                    logger.warning("public module %s.%s has no docstring", modname, name)
                continue
            if f"{modname}.{name}" not in entries and not _documented_elsewhere(obj, entries):
                documented = inspect.isclass(obj) or inspect.isroutine(obj)
                if documented and not inspect.getdoc(obj):
                    logger.warning("public name %s.%s has no docstring", modname, name)
                else:
                    logger.warning(
                        "public name %s.%s has no reference entry (automodule it in docs/api/)",
                        modname,
                        name,
                    )
            if inspect.isclass(obj):
                for member in _undocumented_members(obj):
                    logger.warning(
                        "%s.%s.%s has no docstring, and the class docstring does not name it",
                        modname,
                        name,
                        member,
                    )
    prefixes = tuple(f"{m}." for m in modules)
    for name, (docname, has_text) in sorted(entries.items()):
        if name.startswith(prefixes) and not has_text:
            logger.warning(
                "%s has no docstring (write one in the source, or a #: comment for data)",
                name,
                location=docname,
            )


def _undocumented_members(cls: type) -> list[str]:
    """The public members of ``cls`` that nothing documents.

    A method needs its own docstring. A property or a dataclass field needs its own docstring
    or ``#:`` comment, or an entry in the class docstring's Attributes (or Parameters) section
    (a line ``name : type``). An enum member needs its own docstring or ``#:`` comment, or a
    mention in the class docstring.
    """
    text = inspect.getdoc(cls) or ""
    fields = set()
    for line in text.splitlines():
        m = re.match(r"^\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*(?::|$)", line)
        if m:
            fields.update(n.strip() for n in m.group(1).split(","))
    try:
        comments = ModuleAnalyzer.for_module(cls.__module__).find_attr_docs()
    except Exception:  # no source: the compiled core
        comments = {}
    missing: list[str] = []

    def documented_field(name: str) -> bool:
        return name in fields or (cls.__qualname__, name) in comments

    if dataclasses.is_dataclass(cls):
        missing += [f.name for f in dataclasses.fields(cls) if not documented_field(f.name)]
    for attr, value in vars(cls).items():
        if attr.startswith("_"):
            continue
        if isinstance(value, property):
            if not value.__doc__ and not documented_field(attr):
                missing.append(attr)
        elif isinstance(value, (classmethod, staticmethod)) or inspect.isfunction(value):
            if not inspect.getdoc(value):
                missing.append(attr)
        elif issubclass(cls, Enum) and isinstance(value, cls):
            own = value.__doc__ and value.__doc__ != cls.__doc__
            mentioned = re.search(rf"\b{re.escape(attr)}\b", text)
            if not own and not mentioned and (cls.__qualname__, attr) not in comments:
                missing.append(attr)
    return list(dict.fromkeys(missing))


def _documented_elsewhere(obj: Any, entries: dict[str, tuple[str, bool]]) -> bool:
    """Whether ``obj`` has an entry under another public name (a re-export)."""
    name = getattr(obj, "__name__", None)
    if name is None:
        return False
    for entry in entries:
        if entry.rsplit(".", 1)[-1] == name and _lookup(entry) == (True, obj):
            return True
    return False


def _lookup(path: str) -> tuple[bool, Any]:
    """Import ``a.b.C.d`` as far as it goes; (found, object)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                # A dataclass field without a default is no class attribute.
                if inspect.isclass(obj) and attr in getattr(obj, "__annotations__", {}):
                    return True, _FIELD
                return False, None
        return True, obj
    return False, None


def _resolve_missing(
    app: Sphinx, env: BuildEnvironment, node: addnodes.pending_xref, contnode: nodes.Element
) -> nodes.Element | None:
    # Import what a reference names under autodoc's stand-ins (torch in a docs-only install).
    with mock(app.config.autodoc_mock_imports):
        return _resolve(app, env, node, contnode)


def _resolve(
    app: Sphinx, env: BuildEnvironment, node: addnodes.pending_xref, contnode: nodes.Element
) -> nodes.Element | None:
    if node.get("refdomain") != "py":
        return None
    target: str = node.get("reftarget", "")
    if not _NAME.match(target):
        # Not a Python name: the prose of a docstring's type field ("int32 array of shape
        # (k, 2)"), shown as it is written.
        return contnode
    module = node.get("py:module") or ""
    cls = node.get("py:class") or ""
    candidates = [target]
    if target.startswith("~"):
        candidates = [target[1:]]
    bases = [f"{module}.{cls}" if cls else "", module]
    # The private submodules where the names a public module re-exports are defined.
    bases += [m for m in sorted(sys.modules) if module and m.startswith(f"{module}.")]
    for base in bases:
        if base:
            candidates.append(f"{base}.{candidates[0]}")
    domain = env.get_domain("py")
    documented = domain.objects  # type: ignore[attr-defined]
    for cand in candidates:
        if not cand.startswith("spare_fast"):
            continue
        found, obj = _lookup(cand)
        if not found:
            continue
        if inspect.ismodule(obj):
            return contnode  # a submodule without a page of its own: plain text
        short = cand.rsplit(".", 1)[-1]
        # A public alias documented elsewhere: the same object under another name.
        for name in documented:
            if name.rsplit(".", 1)[-1] != short or not name.startswith("spare_fast"):
                continue
            ok, other = _lookup(name)
            if ok and other is obj:
                resolved = domain.resolve_xref(
                    env, node["refdoc"], app.builder, node["reftype"], name, node, contnode
                )
                if resolved is None:
                    resolved = domain.resolve_xref(
                        env, node["refdoc"], app.builder, "obj", name, node, contnode
                    )
                return resolved if resolved is not None else contnode
        return contnode  # exists, but has no page of its own: plain text
    if node.get("refspecific") and "." not in target:
        # A one-word type in a docstring's field ("like tail"): prose, shown as written.
        return contnode
    return None


def _numbered_references(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """Make a docstring's numbered references ([1]) auto-numbered footnotes named by object.

    The same numbers repeat from one docstring to the next on a page, and docutils wants every
    target name once per page.
    """
    key = re.sub(r"[^A-Za-z0-9]+", "-", name)
    for i, line in enumerate(lines):
        line = re.sub(r"^(\s*)\.\. \[(\d+)\]", rf"\1.. [#{key}-\2]", line)
        lines[i] = re.sub(r"\[(\d+)\]_", rf"[#{key}-\1]_", line)


def _enum_member_doc(
    app: Sphinx, domain: str, objtype: str, contentnode: addnodes.desc_content
) -> None:
    """Give an enum member of the compiled core its own docstring (pybind11 sets one per
    member; autodoc reads no docstring from a plain class attribute)."""
    if domain != "py" or objtype != "attribute" or len(contentnode):
        return
    sig = next(iter(contentnode.parent.findall(addnodes.desc_signature)), None)
    if sig is None or not sig.get("fullname"):
        return
    found, obj = _lookup(f"{sig.get('module')}.{sig['fullname']}")
    if found and isinstance(obj, Enum) and obj.__doc__ and obj.__doc__ != type(obj).__doc__:
        contentnode += nodes.paragraph(text=inspect.cleandoc(obj.__doc__))


def _no_inline_type(app: Sphinx, config: Any) -> None:
    """Keep napoleon from reading "Read-only copy: ..." as the type ``Read-only copy``.

    napoleon takes the text before a colon on the first line of an attribute's or property's
    docstring for its type. The docstrings here are numpydoc prose, so napoleon is handed those
    as it is handed a function's.
    """
    listeners = app.events.listeners["autodoc-process-docstring"]
    for i, listener in enumerate(listeners):
        handler = listener.handler
        if getattr(handler, "__module__", "") != "sphinx.ext.napoleon":
            continue

        def wrapped(app: Sphinx, what: str, *args: Any, _h: Any = handler) -> None:
            _h(app, "function" if what in ("attribute", "property", "data") else what, *args)

        listeners[i] = listener._replace(handler=wrapped)


class PublicData(SphinxDirective):
    """``.. public-data:: MODULE``: an entry for each data name of MODULE's ``__all__``.

    autodoc's ``automodule`` skips data that a module imports from a submodule (a constant, a
    type alias); this directive gives each one its entry, with the ``#:`` comment found where
    it is assigned (the module or one of its submodules). The directive's content may hold a
    definition list ``NAME`` / text for a name whose source has no comment.
    """

    required_arguments = 1
    has_content = True

    def run(self) -> list[nodes.Node]:
        modname = self.arguments[0]
        module = importlib.import_module(modname)
        extra: dict[str, list[str]] = {}
        current = None
        for line in self.content:
            if line and not line[0].isspace():
                current = line.strip()
                extra[current] = []
            elif current is not None:
                extra[current].append(line.strip())
        comments = _attr_comments(module)
        own = ModuleAnalyzer.for_module(modname).find_attr_docs()
        out: list[str] = [f".. py:currentmodule:: {modname}", ""]
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.ismodule(obj) or inspect.isclass(obj) or inspect.isroutine(obj):
                continue
            if isinstance(obj, Enum) or ("", name) in own:
                continue  # automodule documents a name whose #: comment is in the module
            out.append(f".. py:data:: {name}")
            value = _short_repr(obj)
            if value:
                out.append(f"   :value: {value}")
            out.append("")
            for text in comments.get(name, []) + extra.get(name, []):
                out.append(f"   {text}")
            out.append("")
        return self.parse_text_to_nodes("\n".join(out))


def _attr_comments(module: Any) -> dict[str, list[str]]:
    """The ``#:`` comments of the module's names, in the module or its submodules."""
    found: dict[str, list[str]] = {}
    names = [module.__name__]
    path = getattr(module, "__path__", None)
    if path is not None:
        # Only the submodules the package has imported: where its re-exported names live.
        subs = (f"{module.__name__}.{m.name}" for m in pkgutil.iter_modules(path))
        names += [sub for sub in subs if sub in sys.modules]
    for name in names:
        try:
            docs = ModuleAnalyzer.for_module(name).find_attr_docs()
        except Exception:  # a submodule with no source (the compiled core)
            continue
        for (namespace, attr), lines in docs.items():
            if namespace == "" and attr not in found:
                found[attr] = [line for line in lines if line is not None]
    return found


def _short_repr(obj: Any) -> str:
    text = repr(obj)
    return text if len(text) <= 80 and "\n" not in text else ""


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("public-data", PublicData)
    app.connect("autodoc-process-docstring", _numbered_references, priority=400)
    app.connect("object-description-transform", _enum_member_doc)
    app.connect("config-inited", _no_inline_type)
    app.add_config_value("spare_docs_public_modules", [], "env")
    app.connect("doctree-read", _record_entries)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-check-consistency", _check_public_names)
    app.connect("missing-reference", _resolve_missing)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
