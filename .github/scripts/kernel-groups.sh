#!/usr/bin/env bash
# Prints the kernels job's matrix ({"include":[...]}, one line) from the plan's
# matrix on stdin: one entry per non-empty kernel_group.  Its kernels are
# compiled for one row of the group (`--kernels-only`), the first abi3 row by
# id, else the first row: the objects are the same for every row of the group
# (torch-free, one platform, CUDA release and arch set), and an abi3 row
# builds with any CPython.  os and cuda_provision are every member's (plan.sh
# checks); python is the interpreter the tool runs under.
# Usage: kernel-groups.sh < MATRIX
set -euo pipefail
jq -c '{include: [.include[] | select(.kernel_group != "")] | group_by(.kernel_group)
  | map((sort_by((.id | contains("-abi3-") | not), .id) | .[0]) as $rep
        | {group: $rep.kernel_group, row: $rep.id, os: $rep.os, cuda: $rep.cuda,
           cuda_provision: $rep.cuda_provision, python: $rep.python, rows: map(.id)})}'
