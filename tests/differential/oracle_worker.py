"""The oracle: evaluates ClassAd expressions with HTCondor's Python bindings.

Runs as a child process of driver.py and speaks JSON lines on stdin/stdout,
one request answered before the next is read, so that when the bindings
crash (they can segfault) the driver knows which case did it and starts a
fresh worker.

Requests:
  {"op": "context", "name": N, "my": AD, "target": AD-or-null}
      remember a context: a single ad (target null) or a match (MY, TARGET)
  {"op": "eval", "ctx": N, "expr": E}
      -> {"kind": "VALUE", "out": <new-syntax value>}
       | {"kind": "PARSE_ERROR"} | {"kind": "FAIL", "msg": ...}
  {"op": "ad", "text": AD}
      -> {"kind": "AD", "new": repr(), "old": printOld(), "json": printJson()}
       | {"kind": "PARSE_ERROR"}
  {"op": "reparse", "text": T, "syntax": "new"|"old"|"json"}
      -> {"kind": "AD", "old": printOld()} of the ad read from T | {"kind": "PARSE_ERROR"}

Values are printed the way classad_eval prints them: repr() of the simplified
expression. simplify() refuses list and ad results ("Cannot operate on an
invalid ExprTree"), and eval() returns them as Python objects whose lifetime
bugs crash the bindings, so for those the worker evaluates string(E), which
unparses the list or ad value in new syntax.
"""

import json
import os
import sys

os.environ["CONDOR_CONFIG"] = "/dev/null"
# htcondor first: importing it loads the (empty) configuration and puts the
# ClassAd library into compat mode, the semantics tern follows.
import htcondor  # noqa: E402,F401
import classad  # noqa: E402
import classad2  # noqa: E402  (only classad2 reads JSON ads)


def evaluate(expr, scope):
    try:
        tree = classad.ExprTree(expr)
    except Exception:
        return {"kind": "PARSE_ERROR"}
    args = scope or []
    try:
        return {"kind": "VALUE", "out": repr(tree.simplify(*args))}
    except classad.ClassAdValueError:
        pass  # a list or an ad: see the module doc
    except Exception as ex:
        return {"kind": "FAIL", "msg": str(ex)}
    try:
        # (The newline ends a // comment at the end of expr.)
        text = classad.ExprTree("string((%s\n))" % expr).simplify(*args).eval()
    except Exception as ex:
        return {"kind": "FAIL", "msg": str(ex)}
    if not isinstance(text, str):
        return {"kind": "FAIL", "msg": "string() of a list or ad gave %r" % (text,)}
    return {"kind": "VALUE", "out": text}


def read_ad(text, syntax):
    if syntax == "json":
        return classad2.parseOne(text, classad2.ParserType.JSON)
    if syntax == "old":
        return classad.parseOne(text, classad.Parser.Old)
    return classad.ClassAd(text)


def handle(req, contexts):
    op = req["op"]
    if op == "context":
        my = classad.ClassAd(req["my"])
        target = classad.ClassAd(req["target"]) if req.get("target") else None
        contexts[req["name"]] = [my] if target is None else [my, target]
        return {"kind": "OK"}
    if op == "eval":
        return evaluate(req["expr"], contexts.get(req.get("ctx")))
    if op == "ad":
        try:
            ad = classad.ClassAd(req["text"])
        except Exception:
            return {"kind": "PARSE_ERROR"}
        return {"kind": "AD", "new": repr(ad), "old": ad.printOld(), "json": ad.printJson()}
    if op == "reparse":
        try:
            ad = read_ad(req["text"], req["syntax"])
        except Exception as ex:
            return {"kind": "PARSE_ERROR", "msg": str(ex)}
        return {"kind": "AD", "old": ad.printOld()}
    return {"kind": "FAIL", "msg": "unknown op %r" % op}


def main():
    contexts = {}
    out = sys.stdout
    for line in sys.stdin:
        reply = handle(json.loads(line), contexts)
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
