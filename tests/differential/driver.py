"""Differential test of tern's ClassAd engine against HTCondor's Python bindings.

Every case, an expression in a context (a single ad, or a match of a job ad
and a machine ad), is evaluated twice: by the `classad` module (the oracle,
in a worker process, see oracle_worker.py) and by `tern_eval`. The printed
values must be equal, or the difference must match an entry of
allowlist.toml, which says why it is allowed. Then random ads go through
tern's three printers (new syntax, old syntax, JSON) and back, and through the
oracle, to check that each form prints and reads back the same ad.

Run it with tests/differential/run.sh, which provides the oracle's virtual
environment and builds tern. The last line of output is "N passed, M failed".
"""

import argparse
import json
import os
import random
import re
import select
import subprocess
import sys
import tempfile
import time

try:
    import tomllib
except ImportError:  # Python < 3.11
    sys.exit("driver.py: needs Python 3.11 or newer (for tomllib)")

import generate

HERE = os.path.dirname(os.path.abspath(__file__))

# Outcomes that are not values.
PARSE_ERROR = "PARSE_ERROR"
ORACLE_FAIL = "ORACLE_FAIL"  # the bindings raised "Unable to evaluate expression"
ORACLE_CRASH = "ORACLE_CRASH"  # the worker died (segfault) or hung
TERN_CRASH = "TERN_CRASH"  # tern_eval exited neither 0 nor 1, or printed too few lines

ORACLE_TIMEOUT = 20.0
TERN_TIMEOUT = 120.0
BATCH = 400


class Case:
    __slots__ = ("ctx", "expr", "node", "expected", "origin", "oracle", "tern", "verdict", "rule")

    def __init__(self, ctx, expr, node=None, expected=None, origin=""):
        self.ctx = ctx
        self.expr = expr
        self.node = node
        self.expected = expected
        self.origin = origin
        self.oracle = None
        self.tern = None
        self.verdict = None
        self.rule = None


# --- the oracle -----------------------------------------------------------------


class Oracle:
    """The worker process, restarted whenever it dies or hangs."""

    def __init__(self, contexts):
        self.contexts = contexts
        self.proc = None
        self.crashes = 0

    def start(self):
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "oracle_worker.py")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, encoding="utf-8", bufsize=1)
        for name, (my, target) in self.contexts.items():
            reply = self._ask({"op": "context", "name": name, "my": my, "target": target})
            if reply.get("kind") != "OK":
                raise RuntimeError("oracle rejected context %s: %r" % (name, reply))

    def stop(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
            self.proc = None

    def _ask(self, req):
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], ORACLE_TIMEOUT)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            raise EOFError
        return json.loads(line)

    def ask(self, req):
        """The worker's reply, or None when it crashed or hung on this request."""
        if self.proc is None:
            self.start()
        try:
            return self._ask(req)
        except (EOFError, BrokenPipeError, ValueError):
            self.crashes += 1
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            return None

    def evaluate(self, ctx, expr):
        reply = self.ask({"op": "eval", "ctx": ctx, "expr": expr})
        if reply is None:
            return ORACLE_CRASH
        if reply["kind"] == "VALUE":
            return reply["out"]
        if reply["kind"] == "PARSE_ERROR":
            return PARSE_ERROR
        return ORACLE_FAIL


# --- tern -----------------------------------------------------------------------


def tern_argument(expr):
    """expr as a tern_eval argument that can only be read as an expression:
    `[...]` alone would be an ad, `x = 1` an assignment and `-x` may look like
    an option. Parentheses keep the value; the newline ends a // comment."""
    t = expr.lstrip()
    if t.startswith(("[", "-")) or re.match(r"'?[A-Za-z_]\w*'?\s*=(?![=?!])", t):
        return "(" + expr + ("\n)" if "//" in expr else ")")
    return expr


class Tern:
    def __init__(self, binary, ctx_files):
        self.binary = binary
        self.ctx_files = ctx_files  # name -> list of arguments selecting the context
        self.invocations = 0

    def run(self, ctx, exprs):
        """(exit code, output lines, stderr) of one tern_eval run."""
        argv = [self.binary, "-quiet"] + self.ctx_files[ctx] + [tern_argument(e) for e in exprs]
        self.invocations += 1
        try:
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=TERN_TIMEOUT)
        except subprocess.TimeoutExpired:
            return None, [], "timed out"
        out = p.stdout.decode("utf-8", "replace").split("\n")
        if out and out[-1] == "":
            out.pop()
        return p.returncode, out, p.stderr.decode("utf-8", "replace")

    def evaluate(self, ctx, exprs):
        """Results of exprs (values, PARSE_ERROR or TERN_CRASH), one run per
        batch; a batch that fails is split until the culprit runs alone."""
        if not exprs:
            return []
        code, out, _err = self.run(ctx, exprs)
        if code == 0 and len(out) == len(exprs):
            return out
        if len(exprs) == 1:
            if code == 1 and not out:
                return [PARSE_ERROR]
            return [TERN_CRASH]
        half = len(exprs) // 2
        return self.evaluate(ctx, exprs[:half]) + self.evaluate(ctx, exprs[half:])


# --- comparing printed values ---------------------------------------------------


def canonical(text):
    """text with the attributes of every ad literal sorted case-insensitively.

    HTCondor prints nested ads in hash order; tern sorts them. Everything
    else must match byte for byte."""
    out, _ = _scan(text, 0, "")
    return out


def _skip_quoted(s, i):
    q = s[i]
    i += 1
    while i < len(s) and s[i] != q:
        i += 2 if s[i] == "\\" else 1
    return min(i + 1, len(s))


C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


def _canonical_string(token):
    """A string literal; when it holds an ad (string(), unparse() and strcat()
    print ads into strings), the ad inside made canonical too."""
    body = token[1:-1]
    if "[" not in body:
        return token
    decoded = re.sub(r"\\([0-7]{1,3}|.)",
                     lambda m: chr(int(m.group(1), 8)) if m.group(1)[0] in "01234567"
                     else C_ESCAPES.get(m.group(1), m.group(1)), body)
    return '"<string holding>' + canonical(decoded) + '"'


# `[` opens an ad literal, not a subscript, after an operator, or when an
# assignment follows (strings that hold ads run them into other text).
AD_START = re.compile(r"\[\s*('[^']*'|[A-Za-z_]\w*)\s*=(?![=?!])")


def _scan(s, i, stops):
    out = []
    operand = False  # whether the previous token ends an operand (then `[` subscripts)
    while i < len(s) and s[i] not in stops:
        c = s[i]
        if c in "\"'":
            j = _skip_quoted(s, i)
            out.append(_canonical_string(s[i:j]) if c == '"' else s[i:j])
            i, operand = j, True
        elif c == "[" and (not operand or AD_START.match(s, i)):
            text, i = _ad(s, i + 1)
            out.append(text)
            operand = True
        elif c in "([{":
            close = {"(": ")", "[": "]", "{": "}"}[c]
            inner, i = _scan(s, i + 1, close)
            out.append(c + inner + close)
            i, operand = i + 1, True
        elif c.isalnum() or c in "_.":
            j = i
            while j < len(s) and (s[j].isalnum() or s[j] in "_."):
                j += 1
            word = s[i:j]
            out.append(word)
            i, operand = j, word.lower() not in ("is", "isnt")
        else:
            out.append(c)
            i += 1
            if not c.isspace():
                operand = False
    return "".join(out), i


def _ad(s, i):
    items = []
    while i < len(s):
        text, i = _scan(s, i, ";]")
        if text.strip():
            items.append(text.strip())
        if i >= len(s) or s[i] == "]":
            break
        i += 1
    items.sort(key=lambda item: item.split("=", 1)[0].strip().strip("'").lower())
    body = "; ".join(items)
    return ("[ " + body + " ]" if body else "[  ]"), i + 1


# --- the allow-list -------------------------------------------------------------


class Rule:
    def __init__(self, entry, index):
        self.index = index
        self.id = entry.get("id", "entry %d" % index)
        self.reason = entry.get("reason", "").strip()
        if not self.reason:
            raise ValueError("allow-list %s has no reason" % self.id)
        self.expr = entry.get("expr")
        self.functions = [f.lower() for f in entry.get("functions", [])]
        self.regex = re.compile(entry["regex"]) if "regex" in entry else None
        self.any = entry.get("any", False)
        self.oracle = re.compile(entry["oracle"]) if "oracle" in entry else None
        self.tern = re.compile(entry["tern"]) if "tern" in entry else None
        self.compare = entry.get("compare")
        if not (self.expr or self.functions or self.regex or self.any):
            raise ValueError("allow-list %s selects no expression" % self.id)
        if self.compare not in (None,) + tuple(COMPARES):
            raise ValueError("allow-list %s: unknown compare %r" % (self.id, self.compare))
        self.used = 0

    def selects(self, expr):
        if self.expr is not None and expr.strip() != self.expr:
            return False
        if self.functions and not any(
                re.search(r"\b%s\s*\(" % re.escape(f), expr, re.IGNORECASE) for f in self.functions):
            return False
        if self.regex is not None and not self.regex.search(expr):
            return False
        return True

    def allows(self, case):
        if not self.selects(case.expr):
            return False
        if self.oracle is not None and not self.oracle.fullmatch(case.oracle):
            return False
        if self.tern is not None and not self.tern.fullmatch(case.tern):
            return False
        if self.compare is not None:
            return COMPARES[self.compare](case.oracle, case.tern)
        return True


def _ints(a, b):
    return re.fullmatch(r"-?[0-9]+", a) is not None and re.fullmatch(r"-?[0-9]+", b) is not None


# Comparisons an allow-list entry may ask for instead of allowing any difference.
COMPARES = {
    # Equal once every run of digits is the same (ads compared sorted).
    "mask-digits": lambda o, t: re.sub(r"[0-9]+", "0", canonical(o)) == re.sub(r"[0-9]+", "0", canonical(t)),
    # The same characters in another order.
    "same-characters": lambda o, t: sorted(o) == sorted(t),
    # Both ints, the oracle's one greater.
    "oracle-one-more": lambda o, t: _ints(o, t) and int(o) == int(t) + 1,
}


def load_allowlist(path):
    with open(path, "rb") as f:
        data = tomllib.load(f)
    return [Rule(e, i + 1) for i, e in enumerate(data.get("allow", []))]


def judge(case, rules):
    """Sets case.verdict: equal, parse-both, allowed or differ."""
    if case.oracle == PARSE_ERROR and case.tern == PARSE_ERROR:
        case.verdict = "parse-both"
        return
    if case.oracle not in (PARSE_ERROR, ORACLE_FAIL, ORACLE_CRASH, TERN_CRASH) and \
            case.tern not in (PARSE_ERROR, TERN_CRASH) and canonical(case.oracle) == canonical(case.tern):
        case.verdict = "equal"
        return
    for rule in rules:
        if rule.allows(case):
            rule.used += 1
            case.verdict = "allowed"
            case.rule = rule
            return
    case.verdict = "differ"


# --- cases ----------------------------------------------------------------------


def load_corpus(path):
    """Cases and their contexts from corpus.txt (format in its header)."""
    contexts = {}
    cases = []
    ctx = "empty"
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith("@match "):
                ctx = {"job": "job", "mach": "mach"}[line.split()[1]]
                continue
            if line.startswith("@ad"):
                text = line[3:].strip()
                if not text:
                    ctx = "empty"
                else:
                    ctx = "corpus%d" % lineno
                    contexts[ctx] = (text, None)
                continue
            expr, sep, expected = line.partition("  =>  ")
            cases.append(Case(ctx, expr, expected=expected if sep else None,
                              origin="corpus.txt:%d" % lineno))
    return contexts, cases


def base_contexts():
    return {
        "empty": ("[]", None),
        "ad": (generate.SINGLE_AD, None),
        "job": (generate.JOB_AD, generate.MACH_AD),
        "mach": (generate.MACH_AD, generate.JOB_AD),
    }


def generated_cases(seed, count):
    """count random cases: most in the single ad, a fifth in a match, and
    each builtin called directly at least a few times."""
    rng = random.Random(seed)
    single = generate.Generator(rng, generate.SINGLE)
    match = generate.Generator(rng, generate.MATCH)
    cases = []
    for name in sorted(generate.FUNCTIONS):
        for _ in range(4):
            node = single.call_of(name, rng.randint(1, 3))
            cases.append(Case("ad", node.text(), node, origin="seed %d, call of %s" % (seed, name)))
    while len(cases) < count:
        if rng.random() < 0.2:
            ctx, gen = rng.choice(["job", "mach"]), match
        else:
            ctx, gen = "ad", single
        node = gen.expression(rng.choice([1, 2, 2, 3, 3, 4]))
        cases.append(Case(ctx, node.text(), node, origin="seed %d, #%d" % (seed, len(cases))))
    return cases


# --- the run --------------------------------------------------------------------


def write_context_files(contexts, tmp):
    """tern_eval arguments selecting each context: -my-file [-target-file]."""
    files = {}
    for name, (my, target) in contexts.items():
        args = []
        for role, text in (("my", my), ("target", target)):
            if text is None:
                continue
            path = os.path.join(tmp, "%s.%s.ad" % (name, role))
            with open(path, "w", encoding="utf-8") as f:
                f.write(text + "\n")
            args += ["-%s-file" % role, path]
        files[name] = args
    return files


def evaluate_all(cases, oracle, tern):
    for case in cases:
        case.oracle = oracle.evaluate(case.ctx, case.expr)
    by_ctx = {}
    for case in cases:
        by_ctx.setdefault(case.ctx, []).append(case)
    for ctx, group in by_ctx.items():
        # Cases the oracle cannot parse run one by one: one parse error
        # fails a whole tern_eval run.
        alone = [c for c in group if c.oracle == PARSE_ERROR]
        batched = [c for c in group if c.oracle != PARSE_ERROR]
        for i in range(0, len(batched), BATCH):
            chunk = batched[i:i + BATCH]
            for case, result in zip(chunk, tern.evaluate(ctx, [c.expr for c in chunk])):
                case.tern = result
        for case in alone:
            case.tern = tern.evaluate(ctx, [case.expr])[0]


def still_fails(candidates, ctx, oracle, tern, rules):
    """The candidate expressions (texts) that still show a disallowed difference."""
    cases = [Case(ctx, text) for text in candidates]
    evaluate_all(cases, oracle, tern)
    failing = []
    for case in cases:
        judge(case, rules)
        if case.verdict == "differ":
            failing.append(case)
    return failing


def minimize(case, oracle, tern, rules, budget_rounds=25):
    """The smallest expression found by shrinking case.node that still differs."""
    used = [rule.used for rule in rules]  # shrinking must not count as allow-list use
    best = case
    node = case.node
    for _ in range(budget_rounds):
        seen = set()
        candidates = []
        current = node.text()
        for smaller in node.shrinks():
            text = smaller.text()
            if len(text) < len(current) and text not in seen:
                seen.add(text)
                candidates.append((text, smaller))
            if len(candidates) >= 300:
                break
        if not candidates:
            break
        nodes = dict(candidates)
        failing = still_fails([t for t, _ in candidates], case.ctx, oracle, tern, rules)
        if not failing:
            break
        shortest = min(failing, key=lambda c: (len(c.expr), c.expr))
        shortest.node = nodes[shortest.expr]
        best, node = shortest, shortest.node
    for rule, n in zip(rules, used):
        rule.used = n
    return best


# --- round trips ----------------------------------------------------------------


def canonical_json(text):
    """A JSON ad with object members sorted by lower-cased name, numbers as
    their text, and the expressions in "\\/Expr(...)\\/" strings canonical."""
    def sort_pairs(pairs):
        return sorted(((k, expr(v)) for k, v in pairs), key=lambda kv: kv[0].lower())

    def expr(v):
        if isinstance(v, str) and v.startswith("/Expr(") and v.endswith(")/"):
            return "/Expr(" + canonical(v[6:-2]) + ")/"
        if isinstance(v, list):
            return [expr(x) for x in v]
        return v
    try:
        return json.loads(text, object_pairs_hook=sort_pairs, parse_float=str, parse_int=str)
    except ValueError as ex:
        return "invalid JSON (%s): %s" % (ex, text)


def canonical_old(text):
    """Old-syntax lines, canonical and sorted: printOld() keeps hash order."""
    return sorted(canonical(line) for line in text.split("\n") if line)


def line_diff(oracle_old, tern_old):
    """The lines of two old-syntax ads that differ, as an indented text."""
    mine, theirs = canonical_old(tern_old), canonical_old(oracle_old)
    out = ["    oracle: " + line for line in theirs if line not in mine]
    out += ["    tern:   " + line for line in mine if line not in theirs]
    return "\n".join(out)


def roundtrip(seed, count, helper, oracle):
    """Failures (strings) from round-tripping count random ads."""
    rng = random.Random(seed ^ 0x5EED)
    ads = []
    while len(ads) < count:
        text = generate.roundtrip_ad(rng)
        if (oracle.ask({"op": "ad", "text": text}) or {}).get("kind") == "AD":
            ads.append(text)
    try:
        p = subprocess.run([helper], input="\n".join(ads) + "\n", capture_output=True, text=True,
                           encoding="utf-8", timeout=TERN_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as ex:
        return count, ["tern_roundtrip did not run: %s" % ex]
    lines = p.stdout.split("\n")
    if p.returncode != 0 or len(lines) < len(ads):
        return count, ["tern_roundtrip failed (exit %s): %s" % (p.returncode, p.stderr.strip()[:2000])]
    failures = []
    for text, line in zip(ads, lines):
        failures += check_roundtrip(text, json.loads(line), oracle)
    return count, failures


def check_roundtrip(text, tern, oracle):
    """Checks one ad; returns readable failures.

    1. tern prints each form as HTCondor does (up to the order of attributes,
       which HTCondor leaves to its hash table).
    2. For each form tern printed, tern reads that text back to the same ad
       as HTCondor reads from it. (Not necessarily the original ad: reals
       printed with 16 digits need not read back to the same double, and
       1.797693134862316E+308 reads as infinity, in HTCondor too.)
    """
    if "error" in tern:
        return ["ad %s\n    tern could not read it: %s" % (text, tern["error"])]
    ref = oracle.ask({"op": "ad", "text": text})
    if ref is None:
        return ["ad %s\n    the oracle crashed printing it" % text]
    problems = []
    if canonical(tern["new"]) != canonical(ref["new"]):
        problems.append("new syntax differs\n    oracle: %s\n    tern:   %s" % (ref["new"], tern["new"]))
    if canonical_old(tern["old"]) != canonical_old(ref["old"]):
        problems.append("old syntax differs\n" + line_diff(ref["old"], tern["old"]))
    if canonical_json(tern["json"]) != canonical_json(ref["json"]):
        problems.append("JSON differs\n    oracle: %r\n    tern:   %r" % (ref["json"], tern["json"]))
    for form in ("new", "old", "json"):
        mine = tern["read"][form]
        theirs = oracle.ask({"op": "reparse", "text": tern[form], "syntax": form}) or {"kind": ORACLE_CRASH}
        if theirs.get("kind") != "AD":
            if "old" in mine:
                problems.append("tern reads its %s form, HTCondor cannot (%s)\n    text: %r"
                                % (form, theirs.get("msg") or theirs.get("kind"), tern[form]))
        elif "error" in mine:
            problems.append("HTCondor reads tern's %s form, tern cannot (%s)\n    text: %r"
                            % (form, mine["error"], tern[form]))
        elif canonical_old(mine["old"]) != canonical_old(theirs["old"]):
            problems.append("tern and HTCondor read tern's %s form differently\n    text: %r\n"
                            "    what each read, in old syntax:\n%s"
                            % (form, tern[form], line_diff(theirs["old"], mine["old"])))
    return ["ad %s\n    %s" % (text, p) for p in problems]


# --- reporting ------------------------------------------------------------------


def show(case):
    ctx = {"empty": "empty ad", "ad": "generate.SINGLE_AD", "job": "match MY=job TARGET=machine",
           "mach": "match MY=machine TARGET=job"}.get(case.ctx, case.ctx)
    lines = ["  expr:   %s" % case.expr,
             "  oracle: %s" % case.oracle,
             "  tern:   %s" % case.tern,
             "  (%s; %s)" % (case.origin, ctx)]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tern", required=True, help="path of the tern_eval binary")
    ap.add_argument("--roundtrip", help="path of the tern_roundtrip helper (skip round trips without it)")
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: $TERN_DIFF_SEED or 20240917)")
    ap.add_argument("--count", type=int, default=6000, help="number of generated expressions")
    ap.add_argument("--ads", type=int, default=300, help="number of random ads to round-trip")
    ap.add_argument("--allowlist", default=os.path.join(HERE, "allowlist.toml"))
    ap.add_argument("--corpus", default=os.path.join(HERE, "corpus.txt"))
    ap.add_argument("--minimize", type=int, default=0, metavar="N",
                    help="shrink up to N failing generated cases to minimal expressions")
    ap.add_argument("--show", type=int, default=60, help="print at most this many failing cases")
    ap.add_argument("--report", help="also write every failing and allowed case to this file")
    args = ap.parse_args()

    seed = args.seed if args.seed is not None else int(os.environ.get("TERN_DIFF_SEED", "20240917"))
    print("differential: seed %d (rerun with TERN_DIFF_SEED=%d), %d generated expressions" % (seed, seed, args.count))
    started = time.time()
    rules = load_allowlist(args.allowlist)

    contexts = base_contexts()
    corpus_contexts, corpus_cases = load_corpus(args.corpus)
    contexts.update(corpus_contexts)
    cases = corpus_cases + generated_cases(seed, args.count)

    oracle = Oracle(contexts)
    with tempfile.TemporaryDirectory(prefix="tern-diff-") as tmp:
        tern = Tern(args.tern, write_context_files(contexts, tmp))
        evaluate_all(cases, oracle, tern)
        for case in cases:
            judge(case, rules)
        t_eval = time.time() - started

        warnings = []
        for case in cases:
            if case.expected is not None and case.oracle != case.expected:
                warnings.append("%s: the spec says %s => %s, the oracle printed %s"
                                % (case.origin, case.expr, case.expected, case.oracle))

        failing = [c for c in cases if c.verdict == "differ"]
        counts = {v: sum(1 for c in cases if c.verdict == v) for v in ("equal", "parse-both", "allowed", "differ")}
        crashes = sum(1 for c in cases if c.oracle == ORACLE_CRASH)
        fails = sum(1 for c in cases if c.oracle == ORACLE_FAIL)
        tern_crashes = sum(1 for c in cases if c.tern == TERN_CRASH)

        minimized = []
        if args.minimize and failing:
            seen = set()
            for case in sorted((c for c in failing if c.node is not None), key=lambda c: len(c.expr)):
                if len(minimized) >= args.minimize:
                    break
                small = minimize(case, oracle, tern, rules)
                key = re.sub(r"[()\s]", "", small.expr).lower()
                if key not in seen:
                    seen.add(key)
                    small.origin = "shrunk from %s" % case.origin
                    minimized.append(small)

        rt_total, rt_failures = 0, []
        if args.roundtrip:
            rt_total, rt_failures = roundtrip(seed, args.ads, args.roundtrip, oracle)
        oracle.stop()

    # Output: failures first, then the counts, then the summary line.
    if failing:
        print("\n%d expression(s) evaluate differently in tern and HTCondor:\n" % len(failing))
        for case in failing[:args.show]:
            print(show(case) + "\n")
        if len(failing) > args.show:
            print("... and %d more (use --report FILE or --show N)\n" % (len(failing) - args.show))
    if minimized:
        print("Minimized disagreements (%d distinct):\n" % len(minimized))
        for case in sorted(minimized, key=lambda c: c.expr.lower()):
            print(show(case) + "\n")
    if rt_failures:
        print("\n%d round-trip problem(s):\n" % len(rt_failures))
        for text in rt_failures[:args.show]:
            print("  " + text + "\n")
    for w in warnings:
        print("warning: " + w)
    unused = [r for r in rules if r.used == 0]
    for r in unused:
        print("note: allow-list entry %s matched no case" % r.id)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            for case in failing:
                f.write("DIFFER\n" + show(case) + "\n\n")
            for case in minimized:
                f.write("MINIMIZED\n" + show(case) + "\n\n")
            for case in cases:
                if case.verdict == "allowed":
                    f.write("ALLOWED by %s\n%s\n\n" % (case.rule.id, show(case)))
            for text in rt_failures:
                f.write("ROUNDTRIP\n  %s\n\n" % text)

    print("\nexpressions: %d total, %d equal, %d parse error on both sides, %d allowed, %d differing"
          % (len(cases), counts["equal"], counts["parse-both"], counts["allowed"], counts["differ"]))
    print("oracle: %d evaluation failures, %d crashes or hangs (worker restarted %d times); tern: %d crashes"
          % (fails, crashes, oracle.crashes, tern_crashes))
    for r in rules:
        if r.used:
            print("  allowed by %-40s %5d" % (r.id, r.used))
    if args.roundtrip:
        print("round trips: %d ads, %d problems" % (rt_total, len(rt_failures)))
    print("time: %.1fs evaluating (%d tern_eval runs), %.1fs in all" % (t_eval, tern.invocations, time.time() - started))
    passed = counts["equal"] + counts["parse-both"] + counts["allowed"]
    rt_bad_ads = len({p.split("\n", 1)[0] for p in rt_failures})
    passed += rt_total - rt_bad_ads
    failed = counts["differ"] + rt_bad_ads
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
