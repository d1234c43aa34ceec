#!/usr/bin/env python3
"""What the backward of a per-expert loop over one 3-D expert parameter costs (transformers 5.x eager experts:
F.linear(x, self.gate_up_proj[expert]) for each hit expert): autograd's select backward gives each expert a
gradient of the whole parameter, accumulated into the parameter's gradient. Times the loop's backward with and
without the indexing (the same GEMMs on separate per-expert tensors) and reports the difference per expert and per
element of the whole parameter, for fp32 parameters under autocast and for bf16 parameters.

Prints one JSON document (stdout). Run: python3 indexed_expert_grad.py > indexed_expert_grad.json
"""
import json

import torch
import torch.nn.functional as F

import run_corpus as rc  # same folder: the shared timer


def run(experts, rows, cols, tokens, dtype):
    x = torch.randn(tokens, cols, device="cuda", dtype=torch.bfloat16)
    whole = torch.randn(experts, rows, cols, device="cuda", dtype=dtype, requires_grad=True)
    parts = [torch.randn(rows, cols, device="cuda", dtype=dtype, requires_grad=True) for _ in range(experts)]

    def indexed():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y = sum(F.linear(x, whole[e]).float().sum() for e in range(experts))
        y.backward()
        whole.grad = None

    def separate():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y = sum(F.linear(x, parts[e]).float().sum() for e in range(experts))
        y.backward()
        for p in parts:
            p.grad = None

    ti, ts = rc.median_wall(indexed, timed=5), rc.median_wall(separate, timed=5)
    elements = experts * rows * cols
    extra = ti - ts
    return {"experts": experts, "rows": rows, "cols": cols, "tokens": tokens, "dtype": str(dtype),
            "indexed_s": ti, "separate_s": ts, "extra_s": extra,
            "extra_per_expert_s": extra / experts,
            "extra_bytes_per_element_per_expert_at_3tbps": extra / experts * 3.0e12 / elements}


def main():
    rows = []
    for dtype in (torch.float32, torch.bfloat16):
        for experts, r, c in ((8, 2 * 14336, 4096), (32, 2 * 768, 2048), (128, 2 * 768, 2048)):
            try:
                rows.append(run(experts, r, c, 512, dtype))
            except Exception as e:  # noqa: BLE001
                rows.append({"experts": experts, "dtype": str(dtype), "error": repr(e)})
            torch.cuda.empty_cache()
    print(json.dumps({"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
