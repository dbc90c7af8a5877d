"""Random ClassAd expressions and ads, reproducible from a seed.

The generator is type-directed: asked for a value of some type (int, real,
bool, string, list, ad, or any), it picks a literal, an attribute of the
context ad holding such a value, an operator or a builtin returning that
type. With probability ILL_TYPED an argument is replaced by an expression of
any type, so most expressions are well typed and the rest probe the error
paths. Builtins are called with a wrong number of arguments now and then.

Expressions are trees of Node, kept so that the driver can shrink a failing
case to a small one (see Node.shrinks).
"""

import random

ILL_TYPED = 0.1
WRONG_ARITY = 0.12


class Node:
    """An expression: text pieces around child expressions.

    parts has one more element than kids; the text is parts[0] kids[0]
    parts[1] ... kids[-1] parts[-1]. atomic says whether the text may take a
    postfix `.name` or `[i]` without parentheses. variadic nodes (calls,
    lists) may lose children when shrinking.
    """

    __slots__ = ("parts", "kids", "atomic", "variadic")

    def __init__(self, parts, kids=(), atomic=False, variadic=False):
        assert len(parts) == len(kids) + 1
        self.parts = list(parts)
        self.kids = list(kids)
        self.atomic = atomic
        self.variadic = variadic

    def text(self):
        out = [self.parts[0]]
        for kid, part in zip(self.kids, self.parts[1:]):
            out.append(kid.text())
            out.append(part)
        return "".join(out)

    def size(self):
        return 1 + sum(k.size() for k in self.kids)

    def with_kid(self, i, kid):
        kids = list(self.kids)
        kids[i] = kid
        return Node(self.parts, kids, self.atomic, self.variadic)

    def without_kid(self, i):
        """A call or list with child i removed (the separators are uniform)."""
        kids = self.kids[:i] + self.kids[i + 1:]
        if not kids:
            return Node([self.parts[0] + self.parts[-1]], [], self.atomic, self.variadic)
        sep = self.parts[1] if len(self.parts) > 2 else ", "
        parts = [self.parts[0]] + [sep] * (len(kids) - 1) + [self.parts[-1]]
        return Node(parts, kids, self.atomic, self.variadic)

    def shrinks(self):
        """Smaller expressions to try in place of this one, roughly smallest first."""
        for leaf in SHRINK_LEAVES:
            if leaf != self.text():
                yield Node([leaf], atomic=True)
        for kid in self.kids:
            yield kid
        if self.variadic:
            for i in range(len(self.kids)):
                yield self.without_kid(i)
        for i, kid in enumerate(self.kids):
            for smaller in kid.shrinks():
                yield self.with_kid(i, smaller)


def leaf(text, atomic=True):
    return Node([text], atomic=atomic)


SHRINK_LEAVES = ["0", "1", "-1", "2.5", '"a"', "true", "undefined", "error", "{}", "[]"]

# --- literals -----------------------------------------------------------------

INTS = [
    "0", "1", "2", "3", "5", "7", "10", "42", "63", "64", "65", "100", "255", "1024",
    "-1", "-2", "-7", "-100", "2147483647", "-2147483648", "4294967296",
    "9223372036854775807", "-9223372036854775808", "9223372036854775806",
    "-9223372036854775807", "4611686018427387904",
]
REALS = [
    "0.0", "-0.0", "0.5", ".5", ".75", "1.0", "1.5", "2.5", "3.5", "-2.5", "-0.5",
    "3.25", "0.1", "0.2", "100.0", "1e10", "1E10", "2.5e3", "6E-2", "1e-5", "1e16",
    "1e20", "1e308", "-1e308", "1.7976931348623157e308", "4.9e-324", "1e-300",
    "123456789.125", "0.3333333333333333", "9.2233720368547758e18", "-9.3e18", "7.199999999999999",
]
STRINGS = [
    '""', '"a"', '"abc"', '"ABC"', '"Hello"', '"hello"', '"HTCondor"', '"x y"',
    '"42"', '"42xyz"', '"-17"', '"+5"', '" 12 "', '"0x10"', '"007"', '"1.5e3"', '"2.5"',
    '"1e400"', '"-1e400"', '"INF"', '"-inf"', '"NaN"', '"junk"', '"true"', '"FALSE"', '"yes"',
    '"1"', '"0"', '"a\\nb"', '"tab\\there"', '"q\\"uote"', '"back\\\\slash"', '"\\101\\60"',
    '"\\x41"', '"a\\zb"', '"\\777"', '"\\400"', '"\\a\\b\\f\\v\\r"', '"\\\'"', '"\\?"',
    '"\u00e9t\u00e9"', '"\u65e5\u672c"', '"a,b,c"', '"a, b,,c"', '"1,2,3"', '"1.0,2"',
    '"-1,+2,3"', '"x,y,,z"', '"8.9.10"', '"8.9.9"', '"10.0"', '"1.2.3a"', '"alice@site"',
    '"slot1@node7"', '"node7"', '"a  b\\tc"', '"  lead"', '"item10"', '"item9"',
    '"Zebra"', '"apple"', '"APPLE"', '"%Y-%m-%d %H:%M:%S"', '"%c"', '"%j %a %b %p"',
    '"A=1;B=two words"', '"A=1 B=\'two words\'"', '"-n 5 \'two words\'"', '"x" "y"',
]
BOOLS = ["true", "false", "TRUE", "False"]
UNDEFS = ["undefined", "UNDEFINED"]
ERRORS = ["error", "ERROR"]
REGEXES = [
    '"a"', '"^a"', '"b$"', '"A.C"', '"[0-9]+"', '"(\\\\w+)@(\\\\w+)"', '"x|y"', '"^$"',
    '"["', '"(a"', '"a*"', '"\\\\d"', '"node[0-9]"', '"HOST"', '"."', '""',
]
REGEX_OPTS = ['"i"', '"m"', '"s"', '"g"', '"f"', '"fg"', '"ig"', '"x"', '""', '"I"']
SUBSTS = ['"o"', '"\\\\1"', '"\\\\2/\\\\1"', '"[\\\\0]"', '""', '"$1"']
VERSIONS = ['"8.9.10"', '"8.9.9"', '"8.10"', '"10.0.0"', '"1.2.3a"', '"1.2.3"', '""', '"abc"', '"9"']
COMPARE_OPS = ['"<"', '"<="', '"=="', '"!="', '">="', '">"', '"is"', '"isnt"', '"=?="', '"+"', '"LT"']
DELIMS = ['","', '" "', '";"', '", "', '":"', '""']
# absTime() and relTime() of a literal string are folded when parsed, and a
# string that does not convert makes the whole expression a syntax error, so
# bad strings are rare.
ABS_STRINGS = [
    '"1970-01-01T00:00:00Z"', '"2024-02-29T12:34:56"', '"2024-02-29T12:34:56+02:00"',
    '"2001-09-09T01:46:40-05:00"', '"2024-02-29"', '"20240229T123456Z"',
]
REL_STRINGS = ['"1+01:02:03"', '"01:30"', '"-01:30"', '"90"', '"59"', '"1:00:00:00"', '"00:00:01.5"']
BAD_TIME_STRINGS = ['"junk"', '""', '"25:99"']
FORMATS = ['"%Y-%m-%d %H:%M:%S"', '"%c"', '"%j %a %b %p %y"', '"%%"', '""', '"%H:%M"', '"%s"']
EXPR_STRINGS = [
    '"1 + 2"', '"i * 2"', '"s"', '"{1, 2}"', '"[a = 1]"', '"1 +"', '"nosuch"', '"x"',
    '"strcat(s, \\"!\\")"', '""', '"TARGET.x"', '"MY.i"',
]
ENV_V1 = ['"A=1;B=two words"', '"A=1"', '""', '"X=1;X=2"', '"A"', '"A=\\"q\\""']
ENV_V2 = ['"A=1 B=2"', '"A=1 B=\'two words\'"', '""', '"B=3"', '"A=x"', '"C"']
ARGS_V2 = ['"-n 5 \'two words\'"', '"a b  c"', '""', '"\'\'"', '"it\'\'s"', '"\'unterminated"']
NAMES = ['"alice"', '"root"', '"nosuchuser_xyz"', '""', '"alice@site"', '"slot1@node"']


def random_int(rng):
    r = rng.random()
    if r < 0.5:
        return rng.choice(INTS)
    if r < 0.8:
        return str(rng.randint(-20, 300))
    return str(rng.randint(-(2**63), 2**63 - 1))


def random_real(rng):
    r = rng.random()
    if r < 0.5:
        return rng.choice(REALS)
    if r < 0.8:
        return repr(round(rng.uniform(-1000, 1000), rng.randint(0, 4)))
    text = repr(rng.uniform(-1, 1) * 10 ** rng.randint(-320, 308))
    return text if "inf" not in text and "nan" not in text else "1.5"


# --- contexts -----------------------------------------------------------------

SINGLE_AD = """[
  i = 7; n = -3; z = 0; big = 9223372036854775807; small = -9223372036854775808;
  MixedCase = 5; r = 2.5; nr = -0.5; zr = 0.0; huge = 1e308;
  s = "Hello"; e = ""; num = "42"; csv = "a,b,c"; ver = "8.9.10"; sp = " x  y ";
  t = true; f = false; u = undefined; er = error;
  l = {1, 2.5, "x", undefined}; li = {3, 1, 2}; ls = {"a", "B", "c"}; le = {};
  la = {[n = 1; p = 2], [n = 2; p = 5], [m = 3]};
  nest = [p = 1; q = "two"; deep = [s = 3]];
  ref = i + 1; lazy = {i + 1, s}; chain = ref * 2;
  inner = [i = 100; w = parent.i; v = i; tv = toplevel.i; dv = .i; sv = s; mv = MY.i];
  abst = absTime(86400); relt = relTime(90);
  slot5_State = "Claimed"; SlotID = 5; CurrentTime = 7;
  envs = "A=1;B=two words"; argstr = "-n 5 'two words'";
  cyc = cyc2 + 1; cyc2 = cyc
]"""

JOB_AD = """[
  Owner = "alice"; RequestMemory = 2048; RequestCpus = 2; x = 1; Memory = 1;
  Rank = TARGET.Memory; s = "job"; lj = {1, 2};
  Requirements = TARGET.Memory >= RequestMemory && TARGET.Cpus >= RequestCpus
]"""

MACH_AD = """[
  Name = "slot1@ep"; Memory = 4096; Cpus = 4; Arch = "X86_64"; x = 2; y = 3;
  r = 1.5; OpSys = "LINUX"; Start = TARGET.Owner =!= "bob"; Requirements = START
]"""


class Context:
    """What the generator may refer to: attribute names by the type they hold."""

    def __init__(self, name, attrs):
        self.name = name
        self.attrs = attrs


SINGLE = Context("ad", {
    "int": ["i", "n", "z", "big", "small", "MixedCase", "mixedcase", "I", "ref", "chain",
            "SlotID", "inner.i", "inner.v", "inner.w", "inner.tv", "inner.dv", "inner.mv",
            "MY.i", "my.n", "self.i", "toplevel.i", "root.z", ".i", "nest.p", "nest.deep.s",
            'nest["p"]', "li[0]", "CurrentTime", "'i'"],
    "real": ["r", "nr", "zr", "huge", "R", "l[1]"],
    "bool": ["t", "f", "T"],
    "str": ["s", "e", "num", "csv", "ver", "sp", "S", "nest.q", "inner.sv", "slot5_State",
            "ls[1]", "envs", "argstr", "'s'"],
    "list": ["l", "li", "ls", "le", "la", "lazy", "la.n", "la.p", "L"],
    "ad": ["nest", "inner", "nest.deep", "la[0]", "self"],
    "undef": ["u", "nosuch", "NoSuch", "TARGET.i", "target.s", "nest.nosuch", "parent.i",
              "inner.nosuch", "l[3]", "other.i"],
    "error": ["er", "li[5]", "s.x", "i.x", "cyc"],
    "time": ["abst", "relt"],
})

MATCH = Context("match", {
    "int": ["x", "MY.x", "TARGET.x", "other.x", "target.x", "my.x", "ad.x", "y", "Memory",
            "TARGET.Memory", "RequestMemory", "TARGET.RequestMemory", "Cpus", "RequestCpus",
            "Rank", "TARGET.Rank", "MEMORY", "TARGET.y", "lj[1]"],
    "real": ["r", "TARGET.r"],
    "bool": ["Requirements", "TARGET.Requirements", "Start", "TARGET.Start"],
    "str": ["Owner", "TARGET.Owner", "Name", "Arch", "OpSys", "s", "TARGET.s", "MY.s"],
    "list": ["lj", "TARGET.lj"],
    "ad": ["TARGET", "MY", "other", "LEFT", "RIGHT", "lCtx", "toplevel"],
    "undef": ["MY.y", ".x", "toplevel.x", "parent.x", "nosuch", "TARGET.nosuch", "my.Arch",
              "root.x"],
    "error": ["x.y", "Owner.x"],
    "time": [],
})

# --- the grammar --------------------------------------------------------------

TYPES = ["int", "real", "bool", "str", "list", "ad", "undef", "error", "time"]
# How often "any" turns into each type.
ANY_WEIGHTS = [5, 4, 4, 4, 2, 1, 1, 1, 1]

ARITH = ["*", "/", "%", "+", "-"]
SHIFT = ["<<", ">>", ">>>"]
BITWISE = ["&", "^", "|"]
COMPARE = ["<", "<=", ">", ">=", "==", "!="]
IDENTITY = ["=?=", "=!=", "is", "isnt"]
LOGIC = ["&&", "||"]

# Builtins: name -> (result type, signatures). A signature is a list of
# argument kinds (see Generator.arg); "*kind" means zero or more of them.
FUNCTIONS = {
    "ifThenElse": ("any", [["bool", "any", "any"]]),
    "eval": ("any", [["exprstr"]]),
    "unparse": ("str", [["attr"]]),
    "unresolved": ("str", [["attr"], ["attr", "regex"]]),
    "debug": ("any", [["any"]]),
    "isUndefined": ("bool", [["any"]]),
    "isError": ("bool", [["any"]]),
    "isString": ("bool", [["any"]]),
    "isInteger": ("bool", [["any"]]),
    "isReal": ("bool", [["any"]]),
    "isBoolean": ("bool", [["any"]]),
    "isList": ("bool", [["any"]]),
    "isClassAd": ("bool", [["any"]]),
    "isAbstime": ("bool", [["any"]]),
    "isReltime": ("bool", [["any"]]),
    "int": ("int", [["numish"]]),
    "real": ("real", [["numish"]]),
    "string": ("str", [["any"]]),
    "bool": ("bool", [["numish"]]),
    "absTime": ("time", [["abstimeish"], ["abstimeish", "int"]]),
    "relTime": ("time", [["reltimeish"]]),
    "floor": ("int", [["numish"]]),
    "ceiling": ("int", [["numish"]]),
    "ceil": ("int", [["numish"]]),
    "round": ("int", [["numish"]]),
    "pow": ("num", [["num", "num"]]),
    "quantize": ("num", [["num", "num"], ["num", "numlist"]]),
    "random": ("num", [[], ["num"]]),
    "strcat": ("str", [["*any"]]),
    "join": ("str", [["str", "*any"], ["str", "list"], ["list"]]),
    "substr": ("str", [["str", "int"], ["str", "int", "int"]]),
    "strcmp": ("int", [["str", "str"]]),
    "stricmp": ("int", [["str", "str"]]),
    "toUpper": ("str", [["str"]]),
    "toLower": ("str", [["str"]]),
    "size": ("int", [["str"], ["list"], ["ad"]]),
    "split": ("list", [["str"], ["str", "delim"]]),
    "splitUserName": ("list", [["str"]]),
    "splitSlotName": ("list", [["str"]]),
    "versioncmp": ("int", [["version", "version"]]),
    "versionGT": ("bool", [["version", "version"]]),
    "versionGE": ("bool", [["version", "version"]]),
    "versionLT": ("bool", [["version", "version"]]),
    "versionLE": ("bool", [["version", "version"]]),
    "versionEQ": ("bool", [["version", "version"]]),
    "version_in_range": ("bool", [["version", "version", "version"]]),
    "member": ("bool", [["any", "list"]]),
    "identicalMember": ("bool", [["any", "list"]]),
    "anyCompare": ("bool", [["cmpop", "list", "any"]]),
    "allCompare": ("bool", [["cmpop", "list", "any"]]),
    "sum": ("num", [["numlist"]]),
    "avg": ("num", [["numlist"]]),
    "min": ("num", [["numlist"]]),
    "max": ("num", [["numlist"]]),
    "stringListSize": ("int", [["strlist"], ["strlist", "delim"]]),
    "stringListSum": ("num", [["numstrlist"], ["numstrlist", "delim"]]),
    "stringListAvg": ("num", [["numstrlist"], ["numstrlist", "delim"]]),
    "stringListMin": ("num", [["numstrlist"], ["numstrlist", "delim"]]),
    "stringListMax": ("num", [["numstrlist"], ["numstrlist", "delim"]]),
    "stringListMember": ("bool", [["str", "strlist"], ["str", "strlist", "delim"]]),
    "stringListIMember": ("bool", [["str", "strlist"], ["str", "strlist", "delim"]]),
    "stringListsIntersect": ("bool", [["strlist", "strlist"], ["strlist", "strlist", "delim"]]),
    "stringListSubsetMatch": ("bool", [["strlist", "strlist"], ["strlist", "strlist", "delim"]]),
    "stringListISubsetMatch": ("bool", [["strlist", "strlist"], ["strlist", "strlist", "delim"]]),
    "regexp": ("bool", [["regex", "str"], ["regex", "str", "reopt"]]),
    "regexps": ("str", [["regex", "str", "subst"], ["regex", "str", "subst", "reopt"]]),
    "replace": ("str", [["regex", "str", "subst"], ["regex", "str", "subst", "reopt"]]),
    "replaceall": ("str", [["regex", "str", "subst"], ["regex", "str", "subst", "reopt"]]),
    "regexpMember": ("bool", [["regex", "strs"]]),
    "stringList_regexpMember": ("bool", [["regex", "strlist"], ["regex", "strlist", "delim"],
                                         ["regex", "strlist", "delim", "reopt"]]),
    "time": ("int", [[]]),
    "currentTime": ("time", [[]]),
    "dayTime": ("time", [[]]),
    "timeZoneOffset": ("time", [[]]),
    "formatTime": ("str", [["abstime"], ["abstime", "format"]]),
    "interval": ("str", [["int"]]),
    "splitTime": ("ad", [["abstime"], ["reltime"]]),
    "getYear": ("int", [["abstime"]]),
    "getMonth": ("int", [["abstime"]]),
    "getDayOfYear": ("int", [["abstime"]]),
    "getDayOfMonth": ("int", [["abstime"]]),
    "getDayOfWeek": ("int", [["abstime"]]),
    "getHours": ("int", [["abstime"], ["reltime"]]),
    "getMinutes": ("int", [["abstime"], ["reltime"]]),
    "getSeconds": ("int", [["abstime"], ["reltime"]]),
    "getDays": ("int", [["reltime"], ["abstime"]]),
    "envV1ToV2": ("str", [["envv1"]]),
    "mergeEnvironment": ("str", [["*envv2"]]),
    "argsToList": ("list", [["argsv2"]]),
    "listToArgs": ("str", [["strs"]]),
    "countMatches": ("int", [["ctxexpr", "adlist"]]),
    "evalInEachContext": ("list", [["ctxexpr", "adlist"]]),
    "userHome": ("str", [["username"], ["username", "str"]]),
    "userMap": ("str", [["str", "username"], ["str", "username", "str"],
                        ["str", "username", "str", "str"]]),
}

# Builtins whose value depends on the clock, randomness or the machine, and
# so are generated less often (the allow-list decides how they compare).
VOLATILE = {"time", "currentTime", "dayTime", "timeZoneOffset", "random", "userHome", "userMap"}

# Results of "num" builtins count as either int or real.
RESULT_MATCHES = {
    "int": {"int", "num"}, "real": {"real", "num"}, "bool": {"bool"}, "str": {"str"},
    "list": {"list"}, "ad": {"ad"}, "time": {"time"},
}


class Generator:
    def __init__(self, rng, ctx, types=TYPES, weights=ANY_WEIGHTS):
        self.rng = rng
        self.ctx = ctx
        self.types = types
        self.weights = weights
        self.by_result = {}
        for name, (res, _sigs) in FUNCTIONS.items():
            for t, accepts in RESULT_MATCHES.items():
                if res in accepts or res == "any":
                    self.by_result.setdefault(t, []).append(name)

    # -- entry points --

    def expression(self, depth):
        return self.gen("any", depth)

    def call_of(self, name, depth):
        """A call of the builtin `name`, with right or (sometimes) wrong arguments."""
        rng = self.rng
        _res, sigs = FUNCTIONS[name]
        if rng.random() < WRONG_ARITY:
            arity = {len(s) for s in sigs if not any(a.startswith("*") for a in s)}
            n = rng.choice([k for k in range(0, 5) if k not in arity] or [0])
            args = [self.gen("any", depth - 1) for _ in range(n)]
        else:
            args = []
            for kind in rng.choice(sigs):
                if kind.startswith("*"):
                    args.extend(self.arg(kind[1:], depth - 1) for _ in range(rng.randint(0, 4)))
                else:
                    args.append(self.arg(kind, depth - 1))
        spelled = name if rng.random() < 0.9 else rng.choice([name.upper(), name.lower()])
        if not args:
            return Node([spelled + "()"], atomic=True, variadic=True)
        parts = [spelled + "("] + [", "] * (len(args) - 1) + [")"]
        return Node(parts, args, atomic=True, variadic=True)

    # -- types --

    def gen(self, t, depth):
        rng = self.rng
        if t == "any":
            t = rng.choices(self.types, self.weights)[0]
        if t == "num":
            t = rng.choice(["int", "real"])
        if depth <= 0 or rng.random() < 0.3:
            return self.leaf(t)
        return self.compound(t, depth)

    def sub(self, t, depth):
        """An operand that should have type t, but now and then has any type."""
        if self.rng.random() < ILL_TYPED:
            return self.gen("any", depth)
        return self.gen(t, depth)

    def leaf(self, t):
        rng = self.rng
        attrs = self.ctx.attrs.get(t, [])
        if attrs and rng.random() < 0.3:
            return leaf(rng.choice(attrs))
        if t == "int":
            return leaf(random_int(rng), atomic=False)
        if t == "real":
            return leaf(random_real(rng), atomic=False)
        if t == "bool":
            return leaf(rng.choice(BOOLS))
        if t == "str":
            return leaf(rng.choice(STRINGS))
        if t == "undef":
            return leaf(rng.choice(UNDEFS + self.ctx.attrs["undef"]))
        if t == "error":
            return leaf(rng.choice(ERRORS + ["1 / 0", '"a" + 1']), atomic=False)
        if t == "list":
            return self.list_literal(1)
        if t == "ad":
            return self.ad_literal(1)
        if t == "time":
            return self.time_value(1)
        raise ValueError(t)

    def compound(self, t, depth):
        rng = self.rng
        d = depth - 1
        choices = ["op", "op", "op", "call", "call", "cond"]
        if t in ("list", "ad"):
            choices += ["literal", "literal"]
        kind = rng.choice(choices)
        if kind == "literal" and t == "list":
            return self.list_literal(d)
        if kind == "literal" and t == "ad":
            return self.ad_literal(d)
        if kind == "cond":
            return self.conditional(t, d)
        if kind == "call" and self.by_result.get(t):
            name = rng.choice(self.by_result[t])
            if name in VOLATILE and rng.random() < 0.8:
                name = "strcat" if t == "str" else "ifThenElse"
            return self.call_of(name, depth)
        return self.operator(t, d)

    def conditional(self, t, d):
        rng = self.rng
        r = rng.random()
        if r < 0.4:
            return self.binary(self.sub("bool", d), "?", self.sub(t, d),
                               extra=(" : ", self.sub(t, d)))
        if r < 0.7:
            # Elvis binds tighter than anything but . and []: without the
            # parentheses the left side shrinks to its last operand.
            left = self.gen(rng.choice([t, "undef", "undef"]), d)
            return self.binary(left, "?:", self.sub(t, d))
        if r < 0.85:
            return self.postfix_select(t, d)
        return self.postfix_subscript(t, d)

    def operator(self, t, d):
        rng = self.rng
        if t in ("int", "real"):
            r = rng.random()
            if r < 0.45:
                return self.binary(self.sub(t, d), rng.choice(ARITH), self.sub(rng.choice([t, "num", "bool"]), d))
            if r < 0.6 and t == "int":
                return self.binary(self.sub("int", d), rng.choice(SHIFT + BITWISE), self.sub("int", d))
            if r < 0.75:
                return self.unary(rng.choice(["-", "+", "~"] if t == "int" else ["-", "+"]), self.sub(t, d))
            return self.time_arith(d) if r < 0.8 else self.binary(self.sub(t, d), rng.choice(ARITH), self.sub(t, d))
        if t == "bool":
            r = rng.random()
            if r < 0.35:
                ot = rng.choice(["int", "real", "str", "bool", "num", "time"])
                return self.binary(self.sub(ot, d), rng.choice(COMPARE), self.sub(ot if ot != "num" else "num", d))
            if r < 0.55:
                ot = rng.choice(["int", "real", "str", "bool", "undef", "error", "list", "time", "any"])
                return self.binary(self.sub(ot, d), rng.choice(IDENTITY), self.sub(rng.choice([ot, "any"]), d))
            if r < 0.85:
                return self.binary(self.sub("bool", d), rng.choice(LOGIC), self.sub(rng.choice(["bool", "undef", "int"]), d))
            return self.unary("!", self.sub(rng.choice(["bool", "int", "undef"]), d))
        if t == "str":
            return self.call_of(rng.choice(["strcat", "substr", "toUpper", "string", "join", "regexps"]), d + 1)
        if t == "list":
            if rng.random() < 0.5:
                return self.postfix_select("list", d)
            return self.list_literal(d)
        if t == "ad":
            return self.ad_literal(d)
        if t == "undef":
            return self.binary(self.sub("int", d), rng.choice(ARITH + COMPARE), leaf(rng.choice(UNDEFS)))
        if t == "error":
            return self.binary(self.gen("any", d), rng.choice(ARITH + COMPARE + BITWISE), self.gen("any", d))
        if t == "time":
            return self.time_value(d)
        raise ValueError(t)

    def time_arith(self, d):
        rng = self.rng
        return self.binary(self.time_value(d), rng.choice(["+", "-", "<", "==", "*"]),
                           rng.choice([self.time_value(d), self.sub("num", d)]))

    def time_value(self, d):
        rng = self.rng
        if rng.random() < 0.5:
            return self.call_of("absTime", d + 1)
        if rng.random() < 0.5 and self.ctx.attrs["time"]:
            return leaf(rng.choice(self.ctx.attrs["time"]))
        return self.call_of("relTime", d + 1)

    # -- shapes --

    def binary(self, left, op, right, extra=None):
        lp, rp = self.paren(left), self.paren(right)
        op = op.strip()
        if op[0] in "*/%+-<>=!&^|" and self.rng.random() < 0.15:
            spaced = op  # a-b, a<<b: the lexer must not need the spaces
        else:
            spaced = " " + op + " "
        parts = [lp[0], lp[1] + spaced + rp[0], rp[1]]
        kids = [left, right]
        if extra is not None:
            sep, third = extra
            tp = self.paren(third)
            parts[-1] += sep + tp[0]
            parts.append(tp[1])
            kids.append(third)
        wrap = self.rng.random() < 0.3
        if wrap:
            parts[0] = "(" + parts[0]
            parts[-1] += ")"
        return Node(parts, kids, atomic=wrap)

    def paren(self, node):
        """Opening and closing text around a child: sometimes parentheses."""
        if not node.atomic and self.rng.random() < 0.5:
            return ("(", ")")
        return ("", "")

    def unary(self, op, operand):
        lp = self.paren(operand)
        return Node([op + " " * self.rng.randint(0, 1) + lp[0], lp[1]], [operand])

    def postfix_select(self, t, d):
        rng = self.rng
        base = rng.choice([self.ad_literal(d), self.gen("ad", d), self.gen("list", d), self.gen("any", d)])
        name = rng.choice(["a", "b", "n", "p", "q", "x", "A", "nosuch", "s", "deep", "i"])
        return self.postfix(base, "." + name)

    def postfix_subscript(self, t, d):
        rng = self.rng
        base = rng.choice([self.list_literal(d), self.gen("list", d), self.gen("ad", d), self.gen("any", d)])
        index = rng.choice([self.sub("int", d), leaf(rng.choice(['"a"', '"P"', '"q"', "0", "1", "-1", "99"]))])
        b = self.postfix(base, "")
        return Node([b.parts[0], b.parts[1] + "[", "]"], [base, index], atomic=True)

    def postfix(self, base, suffix):
        if base.atomic:
            return Node(["", suffix], [base], atomic=True)
        return Node(["(", ")" + suffix], [base], atomic=True)

    def list_literal(self, d):
        rng = self.rng
        n = rng.choice([0, 1, 2, 2, 3, 3, 4, 5])
        elem = rng.choice(["any", "int", "num", "str", "ad"])
        kids = [self.gen(elem if rng.random() < 0.7 else "any", d) for _ in range(n)]
        if not kids:
            return Node([rng.choice(["{}", "{ }"])], atomic=True, variadic=True)
        parts = ["{"] + [rng.choice([", ", ","])] * (n - 1) + ["}"]
        return Node(parts, kids, atomic=True, variadic=True)

    def ad_literal(self, d):
        rng = self.rng
        n = rng.choice([0, 1, 2, 3, 4])
        names = rng.sample(["a", "b", "n", "p", "q", "x", "A", "s", "deep", "Name", "i", "v"], n)
        kids = [self.gen("any", d) for _ in range(n)]
        if not kids:
            return Node(["[]"], atomic=True)
        parts = ["[" + names[0] + " = "] + ["; %s = " % nm for nm in names[1:]] + ["]"]
        return Node(parts, kids, atomic=True)

    # -- builtin argument kinds --

    def arg(self, kind, d):
        rng = self.rng
        if rng.random() < ILL_TYPED:
            return self.gen("any", d)
        pools = {
            "regex": REGEXES, "reopt": REGEX_OPTS, "subst": SUBSTS, "version": VERSIONS,
            "cmpop": COMPARE_OPS, "delim": DELIMS, "format": FORMATS, "exprstr": EXPR_STRINGS,
            "envv1": ENV_V1, "envv2": ENV_V2, "argsv2": ARGS_V2, "username": NAMES,
        }
        if kind in pools:
            if rng.random() < 0.8:
                return leaf(rng.choice(pools[kind]))
            return self.gen("str", d)
        if kind in ("any", "int", "real", "bool", "str", "list", "ad", "num"):
            return self.gen(kind, d)
        if kind == "numish":
            return self.gen(rng.choice(["int", "real", "str", "bool", "undef"]), d)
        if kind in ("abstimeish", "reltimeish"):
            strings = ABS_STRINGS if kind == "abstimeish" else REL_STRINGS
            if rng.random() < 0.05:
                strings = BAD_TIME_STRINGS + ABS_STRINGS + REL_STRINGS
            return rng.choice([leaf(rng.choice(strings)), self.gen("int", d), self.gen("real", d)])
        if kind == "abstime":
            return rng.choice([self.call_of("absTime", d + 1), leaf(random_int(rng)), self.gen("int", d)])
        if kind == "reltime":
            return self.call_of("relTime", d + 1)
        if kind == "attr":
            return leaf(rng.choice(sum(self.ctx.attrs.values(), []) + ["nosuch"]))
        if kind == "numlist":
            n = rng.randint(0, 4)
            kids = [self.gen(rng.choice(["int", "int", "real", "undef"]), d) for _ in range(n)]
            return self.list_from(kids)
        if kind in ("strs", "adlist"):
            n = rng.randint(0, 4)
            kids = [self.gen("str" if kind == "strs" else "ad", d) for _ in range(n)]
            return self.list_from(kids)
        if kind == "strlist":
            return leaf(rng.choice(['"a,b,c"', '"a, b,,c"', '""', '"A,B"', '"b"', '"x y z"', '"a;b"', '","']))
        if kind == "numstrlist":
            return leaf(rng.choice(['"1,2,3"', '"1,2"', '"1.0,2"', '"-1,+2,3"', '""', '"1,x"', '"5"',
                                    '"1e3,2"', '" 4 , 5 "', '"9223372036854775807,1"']))
        if kind == "ctxexpr":
            return leaf(rng.choice(["p * 2", "p > 2", "n", "p", "n == 1", "nosuch", "p + i", "true"]))
        raise ValueError(kind)

    def list_from(self, kids):
        if not kids:
            return Node(["{}"], atomic=True, variadic=True)
        return Node(["{"] + [", "] * (len(kids) - 1) + ["}"], kids, atomic=True, variadic=True)


# --- ads for the round trips --------------------------------------------------

AD_NAMES = ["a", "B", "c", "Memory", "Owner", "Requirements", "x_1", "ZZ", "name", "Rank",
            "Cmd", "Args", "In", "Out", "Env", "lst", "nested", "big", "Real", "e"]


def roundtrip_ad(rng):
    """New-syntax text of a random ad whose values avoid newlines (old syntax
    cannot hold them)."""
    # No time values: HTCondor's JSON reader drops an absTime literal's zone
    # offset (absTime("2024-02-29T12:34:56+02:00") reads back in UTC).
    gen = Generator(rng, SINGLE, types=TYPES[:-1], weights=ANY_WEIGHTS[:-1])
    names = rng.sample(AD_NAMES, rng.randint(1, 8))
    if rng.random() < 0.1:
        names.append(names[0].swapcase())
    items = []
    for name in names:
        r = rng.random()
        if r < 0.2:
            value = random_int(rng)
        elif r < 0.4:
            value = random_real(rng)
        elif r < 0.55:
            value = rng.choice(STRINGS)
        elif r < 0.6:
            value = rng.choice(BOOLS + UNDEFS + ERRORS)
        else:
            value = gen.gen(rng.choice(["any", "list", "ad", "str"]), rng.randint(1, 3)).text()
        if "\\n" in value or "\\r" in value:
            value = '"no newline"'
        items.append("%s = %s" % (name, value))
    return "[" + "; ".join(items) + "]"
