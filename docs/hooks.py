"""MkDocs hook: docstrings show their doctest examples as Python code.

The package's docstrings are reST-flavoured and hold doctest blocks (``>>> ...`` up to the
next blank line). Rendered as Markdown those lines would be nested block quotes, and a
subscript such as ``res.summary["table1"]["0.002"]`` would read as a reference link that
``mkdocs build --strict`` refuses. This hook turns each doctest block outside a fence into a
fenced ``pycon`` block, and each Sphinx role into the code it names, for the pages and for
the docstrings mkdocstrings renders. A doctest directive (``# doctest: +SKIP``) is for the
test runner, not the reader: it is dropped from the page, and the spaces that aligned it. Long
code lines wrap on the page (``docs/css/code.css``) instead of hiding behind a scroll bar. A
docstring line that is a table's marker (``METHODS_TABLE`` in ``entropylaw.fit.forecast.core``,
filled from the registry when the module is imported) is filled here too, since mkdocstrings
reads the source, not the imported module.

>>> DoctestBlocks(None).run(['>>> f.plot()        # doctest: +SKIP', '>>> x = 1  # one  # doctest: +SKIP'])
['', '```pycon', '>>> f.plot()', '>>> x = 1  # one', '```', '']
"""

from __future__ import annotations

import re

from markdown import Extension
from markdown.preprocessors import Preprocessor
from mkdocs.plugins import event_priority

FENCE = re.compile(r"^\s*(```|~~~)")
# a Sphinx role (:func:`load`, :class:`~.core.Forecast`) is shown as the code it names
ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj):`~?\.?([^`]+)`")
# a doctest directive at the end of an example's line, with the spaces before it
DIRECTIVE = re.compile(r"\s*#\s*doctest:\s*[+-][A-Z_]+(?:\s*,\s*[+-][A-Z_]+)*\s*$")


def _methods_table() -> list[str]:
    """The forecast methods from their registry, as a Markdown table."""
    from entropylaw.fit.forecast.catalog import REGISTRY

    return ["", "| method | what it does |", "|---|---|",
            *(f"| `{name}` | {cls.description} |" for name, cls in REGISTRY.items()), ""]


GENERATED = {"METHODS_TABLE": _methods_table}


class DoctestBlocks(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        fence = None
        i = 0
        while i < len(lines):
            line = lines[i]
            mark = FENCE.match(line)
            if mark:
                fence = None if fence == mark.group(1) else (fence or mark.group(1))
            if fence is None and line.strip() in GENERATED:
                out += GENERATED[line.strip()]()
                i += 1
                continue
            if fence is None and line.lstrip().startswith(">>>"):
                indent = line[: len(line) - len(line.lstrip())]
                block = []
                while i < len(lines) and lines[i].strip():
                    text = lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip()
                    block.append(DIRECTIVE.sub("", text))
                    i += 1
                out += ["", f"{indent}```pycon", *(indent + b for b in block), f"{indent}```", ""]
                continue
            out.append(line if fence else ROLE.sub(r"`\1`", line))
            i += 1
        return out


class DoctestExtension(Extension):
    def extendMarkdown(self, md):  # noqa: N802 (Python-Markdown's name)
        md.preprocessors.register(DoctestBlocks(md), "doctest_blocks", 40)


@event_priority(100)  # before mkdocstrings reads the Markdown extensions
def on_config(config):
    config.markdown_extensions.append(DoctestExtension())
    return config
