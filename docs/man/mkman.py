#!/usr/bin/env python3
"""mkman.py - docs/man/*.md (a small, strict markdown subset) to man(7) roff.

    mkman.py SOURCE.md OUTPUT.N [VERSION]

The subset, one construct per line so that the output is predictable:
  # name(N) - one-line description     title and NAME section (first line)
  ## HEADING                           .SH (upper case by convention)
  ### Heading                          .SS
  paragraph lines                      filled text; a blank line ends it
  - item                               a bullet (continuation lines indented 2)
  `term`                               a line of code spans (comma-separated, each with an
                                       optional *italic*) starts a
  : text                               tagged paragraph (.TP) whose text follows
                                       on ': ' lines (pandoc definition lists)
      code                             4-space indented lines: a no-fill block
  `code`, **bold**, *italic*           inline: bold, bold, italic
Anything else is an error naming the line, so a page never renders oddly.
Reproducible: no date unless SOURCE_DATE_EPOCH is set (Debian sets it).
"""
import datetime
import os
import re
import sys


def esc(text):
    """Escape roff specials in plain text."""
    text = text.replace("\\", "\\e")
    return text


def inline(text):
    out = []
    pos = 0
    for m in re.finditer(r"`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*", text):
        out.append(esc(text[pos:m.start()]))
        if m.group(1) is not None:
            out.append("\\fB" + esc(m.group(1)).replace("-", "\\-") + "\\fR")
        elif m.group(2) is not None:
            out.append("\\fB" + esc(m.group(2)) + "\\fR")
        else:
            out.append("\\fI" + esc(m.group(3)) + "\\fR")
        pos = m.end()
    out.append(esc(text[pos:]))
    line = "".join(out)
    # A line starting with . or ' would be a request.
    if line.startswith((".", "'")):
        line = "\\&" + line
    return line


def convert(src, version):
    lines = open(src, encoding="utf-8").read().split("\n")
    m = re.match(r"^# ([a-z0-9.-]+)\((\d)\) - (.+)$", lines[0])
    if not m:
        sys.exit(f"{src}:1: want '# name(N) - description'")
    name, section, desc = m.groups()
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    date = (datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc).strftime("%Y-%m-%d")
            if epoch else "")
    out = [f'.TH "{name.upper()}" "{section}" "{date}" "fabricbus {version}" "fabricbus"',
           ".SH NAME", f"{esc(name)} \\- {inline(desc)}"]
    state = None  # None, "para", "code", "tp", "item"
    for no, raw in enumerate(lines[1:], start=2):
        where = f"{src}:{no}"
        if raw.startswith("    ") and state in (None, "code"):
            if state != "code":
                out += [".PP", ".RS 4", ".nf"]
                state = "code"
            out.append(esc(raw[4:]).replace("-", "\\-") if raw[4:] else "")
            if out[-1].startswith((".", "'")):
                out[-1] = "\\&" + out[-1]
            continue
        if state == "code":
            out += [".fi", ".RE"]
            state = None
        if not raw.strip():
            state = None
            continue
        if raw.startswith("### "):
            out.append(".SS " + inline(raw[4:]))
            state = None
        elif raw.startswith("## "):
            out.append(".SH " + inline(raw[3:]))
            state = None
        elif raw.startswith("#"):
            sys.exit(f"{where}: only '## ' and '### ' headings after the title")
        elif raw.startswith("- "):
            out += [".IP \\(bu 2", inline(raw[2:])]
            state = "item"
        elif re.fullmatch(r"`[^`]+`(\*[^*]+\*)?(, `[^`]+`(\*[^*]+\*)?)*", raw):
            out += [".TP", inline(raw)]
            state = "tp-term"
        elif raw.startswith(": "):
            if state not in ("tp-term", "tp"):
                sys.exit(f"{where}: ': ' text without a `term` line above")
            out.append(inline(raw[2:]))
            state = "tp"
        elif raw.startswith("  ") and state in ("item", "tp"):
            out.append(inline(raw.strip()))
        elif raw.startswith(" "):
            sys.exit(f"{where}: unexpected indentation (code blocks take 4 spaces after a "
                     "blank line)")
        else:
            if state not in ("para",):
                if state is not None and state != "para":
                    # text right after a list item or tag continues it
                    out.append(inline(raw))
                    continue
                out.append(".PP")
                state = "para"
            out.append(inline(raw))
    if state == "code":
        out += [".fi", ".RE"]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    text = convert(sys.argv[1], sys.argv[3] if len(sys.argv) == 4 else "")
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
