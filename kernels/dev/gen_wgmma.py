#!/usr/bin/env python3
"""Generates the wgmma wrappers of kernels/include/sageattn/ptx.cuh (the block
between the GENERATED markers): one function per (instruction, N), since the
accumulator count is part of the asm operand list.  Run and paste:
    python3 kernels/dev/gen_wgmma.py > /tmp/w.txt
"""

def regs(lo, n):
    return ",".join(f"%{i}" for i in range(lo, lo + n))


def fn(name, ptx, n, acc_t, acc_c, a_regs, trans_b=0):
    na = n // 2  # accumulators per thread for m64nN
    out = []
    sig_a = "const uint32_t (&a)[4], " if a_regs else "uint64_t desc_a, "
    bdesc = "B from shared memory, MN-major (imm-trans-b 1)" if trans_b else "B from shared memory"
    out.append(f"// {ptx}: m64n{n}, {'A from registers' if a_regs else 'A from shared memory'}, {bdesc};")
    out.append(f"// D += A*B when scale_d != 0, D = A*B otherwise.")
    out.append(f"__device__ __forceinline__ void {name}({acc_t} (&d)[{na}], {sig_a}uint64_t desc_b, int scale_d) {{")
    d = regs(0, na)
    if a_regs:
        a = "{" + regs(na, 4) + "}"
        b = f"%{na + 4}"
        sc = f"%{na + 5}"
    else:
        a = f"%{na}"
        b = f"%{na + 1}"
        sc = f"%{na + 2}"
    tail = "p" if ".s32" in ptx else (f"p, 1, 1, {trans_b}" if ".f16" in ptx else "p, 1, 1")
    out.append('  asm volatile(')
    out.append('      "{\\n.reg .pred p;\\n"')
    out.append(f'      "setp.ne.b32 p, {sc}, 0;\\n"')
    out.append(f'      "{ptx} "')
    # split the long register list over lines
    dl = d.split(",")
    out.append('      "{"')
    for i in range(0, len(dl), 16):
        chunk = ",".join(dl[i:i + 16])
        sep = "," if i + 16 < len(dl) else ""
        out.append(f'      "{chunk}{sep}"')
    out.append(f'      "}}, {a}, {b}, {tail};\\n}}\\n"')
    outs = [f'"+{acc_c}"(d[{i}])' for i in range(na)]
    for i in range(0, na, 8):
        lead = ": " if i == 0 else "  "
        sep = "," if i + 8 < na else ""
        out.append(f"      {lead}{', '.join(outs[i:i + 8])}{sep}")
    if a_regs:
        out.append(f'      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));')
    else:
        out.append(f'      : "l"(desc_a), "l"(desc_b), "r"(scale_d));')
    out.append("}")
    return "\n".join(out)


parts = []
for n in (64, 128):
    parts.append(fn(f"wgmma_m64n{n}k32_s8_ss", f"wgmma.mma_async.sync.aligned.m64n{n}k32.s32.s8.s8", n, "int32_t", "r", False))
# n72 / n136: the fp8 P.V with an extra 8-row group of V^T (a row of ones: the row sums of P)
for n in (64, 72, 128, 136):
    parts.append(fn(f"wgmma_m64n{n}k32_e4m3_rs", f"wgmma.mma_async.sync.aligned.m64n{n}k32.f32.e4m3.e4m3", n, "float", "f", True))
for n in (64, 128):
    parts.append(fn(f"wgmma_m64n{n}k16_f16_rs", f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16", n, "float", "f", True))
for n in (64, 128):
    parts.append(fn(f"wgmma_m64n{n}k16_f16_rs_tb", f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16", n, "float", "f",
                    True, trans_b=1))
print("\n".join(parts))
