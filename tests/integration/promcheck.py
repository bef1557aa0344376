#!/usr/bin/env python3
"""promcheck.py FILE [CHECK...]: check a node_exporter textfile against the Prometheus text
exposition format (0.0.4) and naming conventions, then evaluate CHECKs.

Format: every line is a HELP, TYPE or other comment, blank, or a sample
`name{label="value",...} value [timestamp]` with the grammar's names, escapes (\\\\, \\", \\n) and
float values; every family has exactly one HELP and one TYPE, before its samples; a family's
lines are contiguous; no series appears twice. Naming: names are qgc_*, counters end in _total
and nothing else does, names ending in _bytes or _seconds are not counters of something else.

CHECK: `name{label="v",...}OPvalue` with OP one of == != > >= < <=: the sum of the samples of
name whose labels include the given ones; at least one sample must match (`name{...}?` only
requires that one exists, `name{...}!` that none does).
Exit 0 when all is well, 1 with a message per problem otherwise."""
import math
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
VALUE = r'"(?:[^"\\\n]|\\[\\"n])*"'
FLOAT = r"[+-]?(?:\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|Inf|NaN)"
SAMPLE = re.compile(
    rf"^(?P<name>{NAME})(?:\{{(?P<labels>(?:{LABEL}={VALUE}(?:,{LABEL}={VALUE})*,?)?)\}})?"
    rf" (?P<value>{FLOAT})(?: (?P<ts>-?\d+))?$")
PAIR = re.compile(rf"({LABEL})=({VALUE})")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


def unescape(v):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), v[1:-1])


def parse(text):
    errs, help_, type_, samples, seen, order = [], {}, {}, {}, set(), []
    if text and not text.endswith("\n"):
        errs.append("the file does not end with a newline")
    for n, line in enumerate(text.split("\n")[:-1], 1):
        if line.startswith("#"):
            m = re.match(rf"^# (HELP|TYPE) ({NAME}) ?(.*)$", line)
            if not m:
                continue  # a plain comment
            kind, name, rest = m.groups()
            table = help_ if kind == "HELP" else type_
            if name in table:
                errs.append(f"{n}: a second {kind} for {name}")
            if kind == "TYPE":
                if rest not in TYPES:
                    errs.append(f"{n}: TYPE {name} '{rest}' is not a type")
                if name in samples:
                    errs.append(f"{n}: TYPE {name} after its samples")
            elif not rest:
                errs.append(f"{n}: HELP {name} has no text")
            table[name] = rest
            if not order or order[-1] != name:
                if name in order:
                    errs.append(f"{n}: the lines of {name} are not together")
                order.append(name)
            continue
        if not line.strip():
            continue
        m = SAMPLE.match(line)
        if not m:
            errs.append(f"{n}: not a sample line: {line!r}")
            continue
        name = m.group("name")
        labels = tuple(sorted((k, unescape(v)) for k, v in PAIR.findall(m.group("labels") or "")))
        if len({k for k, _ in labels}) != len(labels):
            errs.append(f"{n}: a label appears twice: {line!r}")
        if (name, labels) in seen:
            errs.append(f"{n}: duplicate series {name}{dict(labels)}")
        seen.add((name, labels))
        if not order or order[-1] != name:
            if name in order:
                errs.append(f"{n}: the lines of {name} are not together")
            order.append(name)
        v = m.group("value")
        samples.setdefault(name, []).append(
            (dict(labels), float(v.replace("Inf", "inf").replace("NaN", "nan"))))
    for name in samples:
        if name not in help_:
            errs.append(f"{name}: no HELP")
        if name not in type_:
            errs.append(f"{name}: no TYPE")
        t = type_.get(name)
        if not name.startswith("qgc_"):
            errs.append(f"{name}: not in the qgc_ namespace")
        if t == "counter" and not name.endswith("_total"):
            errs.append(f"{name}: a counter without _total")
        if t != "counter" and name.endswith("_total"):
            errs.append(f"{name}: _total on a {t}")
        for unit in ("bytes", "seconds"):
            if unit in name.split("_")[:-1] and not name.endswith("_" + unit) and t != "counter":
                errs.append(f"{name}: the unit {unit} is not the suffix")
        for labels, v in samples[name]:
            if math.isnan(v):
                errs.append(f"{name}{labels}: NaN")
    return errs, samples


OPS = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, ">=": lambda a, b: a >= b,
       "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, "<": lambda a, b: a < b}
CHECK = re.compile(rf"^({NAME})(?:\{{(.*)\}})?(==|!=|>=|<=|>|<|\?|!)(.*)$")


def check(samples, expr):
    m = CHECK.match(expr)
    if not m:
        return f"bad check {expr!r}"
    name, lab, op, want = m.groups()
    want_labels = {k: unescape(v) for k, v in PAIR.findall(lab or "")}
    hits = [v for labels, v in samples.get(name, [])
            if all(labels.get(k) == v for k, v in want_labels.items())]
    if op == "!":
        return f"{expr}: {len(hits)} samples match" if hits else None
    if not hits:
        return f"{expr}: no sample matches"
    if op == "?":
        return None
    total = sum(hits)
    return None if OPS[op](total, float(want)) else f"{expr}: the value is {total:g}"


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    errs, samples = parse(text)
    for expr in sys.argv[2:]:
        e = check(samples, expr)
        if e:
            errs.append(e)
    for e in errs:
        print(f"promcheck: {sys.argv[1]}: {e}", file=sys.stderr)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
