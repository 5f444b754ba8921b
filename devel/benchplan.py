"""The plan of one benchmark run (DIR/plan.tsv), read by devel/bench-env,
which carries it out, and devel/bench-report, which reports on it.
devel/benchmark writes it: one tab-separated line per item,

    rounds      N
    algorithms  LIST            afalg-bench's --algorithms (empty: all)
    bench       PROGRAM         afalg-bench
    tls         LIST            gnutls-cli runs: RUN or ENV:RUN items, or none
    env         NAME  TITLE  KIND  BUDGET  SETTINGS  [COLUMNS  [ALGORITHMS  [CALIBRATE
                [RECORDS  [EXTRAS]]]]]
    column      LABEL  BUILD  PREFIX  SETTINGS

KIND is host or vm, BUDGET afalg-bench's seconds per cell there, PREFIX a
GnuTLS build's install directory, SETTINGS VAR=VALUE words added to the
environment (an environment's to every column run in it).  An
environment may name its own COLUMNS (comma-separated labels; empty: all
the plan's), ALGORITHMS (empty: the plan's; -: no afalg-bench), CALIBRATE (afalgtool
--calibrate's options there, words), RECORDS (TLS records over loopback
TCP, bench/tls-bench: SETS separated by ';', each COLUMNS/CIPHERS, both
comma-separated; a cipher NAME runs TLS 1.2 and 1.3, NAME@1.2 one of
them) and EXTRAS (comma-separated: cli=COL+COL, the gnutls-cli runs in
those columns only (cli=-: none); tls=RUN+RUN, these gnutls-cli runs
here whatever the plan's; openssl, OpenSSL's afalg engine; cost, the cost
table; soak=N, N gnutls-cli --benchmark-ciphers runs in a row after the
calibration; startup=N, gnutls-cli --version N times per build and round
instead of 100).  A column's SETTINGS may hold KTLS=1: its runs get a
configuration file with "ktls = true" in [global] (GnuTLS's kTLS, in a
build configured with --enable-ktls)."""

import os

# gnutls-cli's benchmarks: name (the option without --benchmark-), tests of
# 5 s each
TLS_RUNS = {"tls-kx": 9, "tls-ciphers": 18, "ciphers": 20}


def read_plan(top):
    plan = {"rounds": 1, "algorithms": "", "bench": "", "tls": "",
            "envs": [], "columns": []}
    with open(os.path.join(top, "plan.tsv")) as f:
        for line in f:
            kind, *rest = line.rstrip("\n").split("\t")
            if kind == "env":
                name, title, where, budget, settings, *more = rest
                more += [""] * (5 - len(more))
                plan["envs"].append({"name": name, "title": title, "kind": where,
                                     "budget": float(budget),
                                     "settings": settings.split(),
                                     "columns": [c for c in more[0].split(",") if c],
                                     "algorithms": more[1],
                                     "calibrate": more[2].split(),
                                     "records": records(more[3]),
                                     "extras": extras(more[4])})
            elif kind == "column":
                label, build, prefix, settings = rest
                plan["columns"].append({"name": label, "build": build,
                                        "prefix": prefix,
                                        "settings": settings.split()})
            elif kind == "rounds":
                plan["rounds"] = int(rest[0])
            else:
                plan[kind] = rest[0]
    return plan


def records(text):
    """RECORDS: [(columns, [(cipher, version), ...]), ...]"""
    out = []
    for item in text.split(";"):
        if not item.strip():
            continue
        cols, _, ciphers = item.partition("/")
        tests = []
        for c in ciphers.split(","):
            name, _, version = c.partition("@")
            # CBC suites exist in TLS 1.2 only
            versions = [version] if version else (
                ["1.2"] if "CBC" in name else ["1.2", "1.3"])
            tests += [(name, v) for v in versions]
        out.append(([c for c in cols.split(",") if c], tests))
    return out


def extras(text):
    """EXTRAS: {name: value} (value "" where there is none)."""
    out = {}
    for item in text.split(","):
        if item:
            k, _, v = item.partition("=")
            out[k] = v
    return out


def env_plan(plan, env):
    """The plan as one environment carries it out: its own columns and
    algorithms where it names them."""
    cols = [c for c in plan["columns"]
            if not env["columns"] or c["name"] in env["columns"]]
    return {**plan, "columns": cols, "all_columns": plan["columns"],
            "algorithms": env["algorithms"] or plan["algorithms"]}


def tls_runs(plan, env):
    """The gnutls-cli runs of an environment, in TLS_RUNS's order."""
    chosen = set()
    if "cli" in env.get("extras", {}) and env["extras"]["cli"] == "-":
        return []
    spec = env.get("extras", {}).get("tls")
    for item in (spec.replace("+", ",") if spec else plan["tls"]).split(","):
        where, _, run = item.rpartition(":")
        if item in ("", "none"):
            continue
        if run not in TLS_RUNS:
            raise ValueError(f"unknown gnutls-cli run '{run}' (not one of "
                             f"{', '.join(TLS_RUNS)})")
        if where in ("", env["name"]):
            chosen.add(run)
    return [r for r in TLS_RUNS if r in chosen]


def mode(column):
    """The module's mode in a column of the accel build: auto, kernel or
    off; None for other builds."""
    if column["build"] not in ("accel", "accel-ktls"):
        return None
    value = "auto"
    for s in column["settings"]:
        if s.startswith("GNUTLS_AFALG="):
            value = s.split("=", 1)[1]
    return value
