#!/usr/bin/env python3
"""Precision on whole public repositories, against findings judged by hand.

`judged.tsv` holds findings of gpuops on the development set (see README.md here), each judged
true, false or debatable with a one-line reason. This script lints each repository tree again
and prints, per rule and overall:
  - how many judged-true findings are still found (losing one is a regression),
  - how many judged-false findings are still reported (each one left is a false alarm),
  - findings nobody judged yet (new: judge a sample of them and add them to judged.tsv),
and the share of true findings among the judged ones still reported.

A finding is the same finding when its repository, rule, path, line and column are.

    python3 benches/realworld/measure.py --trees DIR [--bin target/release/gpuops] [--repo NAME]
    python3 benches/realworld/measure.py --trees DIR --new > new.tsv   # unjudged findings

DIR holds one directory per repository (named as in judged.tsv), each the repository's tree.
Runs outside CI: it needs the trees (snapshots of public repositories, not kept here).
"""
import argparse
import collections
import csv
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def lint(binary, tree):
    """The findings of one tree (suppressed ones left out), as (rule, severity, path, line, col,
    message, the (path, line, col) of the places it marks as another instance of it)."""
    p = subprocess.run(
        [binary, "lint", ".", "--format", "json", "--no-config"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if p.returncode not in (0, 1):
        print(f"warning: {tree}: exit {p.returncode}: {p.stderr.strip()[:300]}", file=sys.stderr)
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        return []
    return [
        (
            d["rule"],
            d["severity"],
            d["path"],
            str(d["line"]),
            str(d["column"]),
            d["message"],
            [
                (r["path"], str(r["line"]), str(r["column"]))
                for r in d.get("related", [])
                if r.get("message", "").startswith("also ")
            ],
        )
        for d in doc.get("diagnostics", [])
        if not d.get("suppressed")
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trees", required=True, help="directory holding one tree per repository")
    ap.add_argument("--bin", default="target/release/gpuops", help="the gpuops binary")
    ap.add_argument("--judged", default=os.path.join(HERE, "judged.tsv"))
    ap.add_argument("--repo", action="append", help="only these repositories")
    ap.add_argument("--new", action="store_true", help="print the unjudged findings as TSV")
    args = ap.parse_args()

    judged = {}
    repos = []
    with open(args.judged, newline="") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            key = (r["repo"], r["rule"], r["path"], r["line"], r["col"])
            judged[key] = r
            if r["repo"] not in repos:
                repos.append(r["repo"])
    if args.repo:
        repos = [r for r in repos if r in args.repo]

    binary = os.path.abspath(args.bin)
    found = {}
    # Places one finding marks as more of the same cause ("also …"): a judged finding there is
    # still reported, as part of that one.
    merged = set()
    for repo in repos:
        tree = os.path.join(args.trees, repo)
        if not os.path.isdir(tree):
            print(f"warning: no tree for {repo} under {args.trees}", file=sys.stderr)
            continue
        for rule, sev, path, line, col, msg, also in lint(binary, tree):
            found[(repo, rule, path, line, col)] = (sev, msg)
            merged.update((repo, rule, p, ln, c) for p, ln, c in also)

    if args.new:
        print("repo\trule\tseverity\tpath\tline\tcol\tmessage")
        for key, (sev, msg) in sorted(found.items()):
            if key not in judged:
                repo, rule, path, line, col = key
                print("\t".join([repo, rule, sev, path, line, col, msg.replace("\t", " ")]))
        return

    linted = set(repos)
    rows = collections.defaultdict(collections.Counter)
    for key, r in judged.items():
        if key[0] not in linted:
            continue
        rule, verdict = r["rule"], r["verdict"]
        still = key in found
        rows[rule][f"{verdict}_judged"] += 1
        if not still and key in merged:
            rows[rule][f"{verdict}_merged"] += 1
        if still:
            rows[rule][f"{verdict}_still"] += 1
            if found[key][0] == "error":
                rows[rule][f"{verdict}_error"] += 1
    for key, (sev, _) in found.items():
        if key not in judged:
            rows[key[1]]["new"] += 1
            if sev == "error":
                rows[key[1]]["new_error"] += 1

    head = f"{'rule':40} {'true kept':>10} {'false left':>10} {'debat. left':>11} {'new':>5}"
    print(head)
    print("-" * len(head))
    total = collections.Counter()
    for rule in sorted(rows):
        c = rows[rule]
        total.update(c)
        print(
            f"{rule:40} {c['true_still']:>4}/{c['true_judged']:<5} "
            f"{c['false_still']:>4}/{c['false_judged']:<5} "
            f"{c['debatable_still']:>5}/{c['debatable_judged']:<5} {c['new']:>5}"
        )
    print("-" * len(head))
    t = total
    print(
        f"{'all':40} {t['true_still']:>4}/{t['true_judged']:<5} "
        f"{t['false_still']:>4}/{t['false_judged']:<5} "
        f"{t['debatable_still']:>5}/{t['debatable_judged']:<5} {t['new']:>5}"
    )
    kept = t["true_still"] + t["false_still"] + t["debatable_still"]
    if kept:
        print(
            f"\njudged findings still reported: {kept}; true {t['true_still'] / kept:.0%}, "
            f"false {t['false_still'] / kept:.0%}, debatable {t['debatable_still'] / kept:.0%}"
        )
    errors = t["true_error"] + t["false_error"] + t["debatable_error"]
    if errors:
        print(f"of them errors: {errors}; true {t['true_error'] / errors:.0%}")
    lost = t["true_judged"] - t["true_still"] - t["true_merged"]
    merged_note = f" ({t['true_merged']} more marked on another finding of theirs)" if t["true_merged"] else ""
    print(
        f"judged-true findings lost: {lost}{merged_note}; unjudged findings: {t['new']} ({t['new_error']} errors)"
    )


if __name__ == "__main__":
    main()
