#!/usr/bin/env python3
"""Developer build of sageattention._C without the team's build tool.

Compiles every kernel family listed in kernels/families.json for the archs
that can run it (SA_ARCHS, default "90"), the torch binding, and links
python/sageattention/_C.abi3.so.  Jobs run in parallel (SA_JOBS, default
nproc).  Torch headers/libraries come from SA_TORCH_DIR (a torch package
directory) or the importable torch.

    python3 kernels/tools/build_ext.py            # sm_90
    SA_ARCHS="80 89 90" python3 kernels/tools/build_ext.py
"""
import concurrent.futures as cf
import json
import os
import subprocess
import sys
import sysconfig

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd):
    print("+ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.stdout.strip():
        print(r.stdout, flush=True)
    if r.returncode != 0:
        raise SystemExit(f"command failed ({r.returncode}): {' '.join(cmd)}")
    return r.stdout


def main():
    fam = json.load(open(os.path.join(ROOT, "kernels", "families.json")))
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    nvcc = os.environ.get("NVCC", os.path.join(cuda, "bin", "nvcc"))
    archs = [a for a in os.environ.get("SA_ARCHS", "90").split()]
    build = os.environ.get("SA_BUILD_DIR", os.path.join(ROOT, "build-dev"))
    os.makedirs(build, exist_ok=True)
    torch_dir = os.environ.get("SA_TORCH_DIR")
    if torch_dir:
        abi = os.environ.get("SA_CXX11_ABI", "1")
    else:
        import torch

        torch_dir = os.path.dirname(torch.__file__)
        abi = str(int(torch._C._GLIBCXX_USE_CXX11_ABI))
    torch_inc = [os.path.join(torch_dir, "include"), os.path.join(torch_dir, "include", "torch", "csrc", "api", "include")]
    torch_lib = os.path.join(torch_dir, "lib")
    py_inc = sysconfig.get_paths()["include"]
    incs = [os.path.join(ROOT, d) for d in fam["include_dirs"]]

    jobs = []
    objs = []
    for name, f in fam["families"].items():
        if "archs" in f:  # exact (possibly arch-specific) targets, e.g. "9.0a": built when the base arch is requested
            targets = [t.replace(".", "") for t in f["archs"]]
            fam_archs = [t for t in targets if t.rstrip("af") in archs]
            if not fam_archs:
                print(f"family {name}: none of {f['archs']} requested, skipped")
                continue
        else:
            min_arch = int(float(f["min_arch"]) * 10 + 0.5)
            fam_archs = [a for a in archs if int(a) >= min_arch]
            if not fam_archs:
                print(f"family {name}: no requested arch >= {f['min_arch']}, skipped")
                continue
        gencode = []
        for a in fam_archs:
            gencode += ["-gencode", f"arch=compute_{a},code=sm_{a}"]
        for src in f["sources"]:
            obj = os.path.join(build, os.path.basename(src) + ".o")
            objs.append(obj)
            # SA_FLAGS_<FAMILY>: extra nvcc flags for one family (tuning variants, e.g. SA_FLAGS_SM90="-DSA90_F16_DIRECT=1")
            extra = os.environ.get(f"SA_FLAGS_{name.upper()}", "").split()
            jobs.append([nvcc, *fam["nvcc_flags"], *extra, *gencode, *[f"-I{i}" for i in incs], "-c", os.path.join(ROOT, src), "-o", obj])
    for src in fam["binding"]["sources"]:
        obj = os.path.join(build, os.path.basename(src) + ".o")
        objs.append(obj)
        jobs.append(["g++", *fam["cxx_flags"], f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
                     *[f"-D{d}" for d in fam["binding"].get("defines", [])],
                     *[f"-I{i}" for i in incs + torch_inc], f"-I{py_inc}", f"-I{os.path.join(cuda, 'include')}",
                     "-c", os.path.join(ROOT, src), "-o", obj])
    n = int(os.environ.get("SA_JOBS", os.cpu_count() or 1))
    with cf.ThreadPoolExecutor(max_workers=n) as ex:
        for fut in [ex.submit(run, j) for j in jobs]:
            fut.result()
    out = os.environ.get("SA_OUT", os.path.join(ROOT, "python", "sageattention", "_C.abi3.so"))
    run(["g++", "-shared", "-o", out, *objs, f"-L{torch_lib}", "-ltorch", "-ltorch_cpu", "-lc10", "-lc10_cuda", "-ltorch_cuda",
         f"-L{os.path.join(cuda, 'lib64')}", "-lcudart_static", "-ldl", "-lrt", "-lpthread", "-Wl,--no-as-needed"])
    print("built", out)


if __name__ == "__main__":
    main()
