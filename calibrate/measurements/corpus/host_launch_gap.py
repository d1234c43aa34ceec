#!/usr/bin/env python3
"""Host time per kernel on this machine: what decides a host-bound step, measured the way the framework presets'
kernel_launch_gap_us and backward_launch_gap_us were (wall time of a host-bound pass over the kernels it launched).

- floor: x.add_(1) on a 1-element CUDA tensor from a Python loop (the bare launch, no module code);
- forward / backward: a small transformers Llama (hidden 512, 8 heads, the corpus's llama-tiny shapes) at 512 tokens,
  whose kernels take a fraction of the wall time: forward wall / forward kernels, and (forward + backward wall -
  forward wall) / backward kernels, kernels counted by torch.profiler over one pass.

Run on the GPU machine: python3 host_launch_gap.py -o OUT.json [--layers 12,48]
Prints one line per measurement and writes them with the host's CPU model and the library versions.
"""
import argparse
import json
import platform
import subprocess
import time

import torch

from run_corpus import kernel_time, median_wall


def cpu_model():
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def floor_us(n=20000):
    x = torch.zeros(1, device="cuda")
    for _ in range(1000):
        x.add_(1)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        x.add_(1)
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e6


def llama(layers):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=layers, num_attention_heads=8,
                      num_key_value_heads=8, vocab_size=32000, max_position_embeddings=2048)
    cfg._attn_implementation = "sdpa"
    model = LlamaForCausalLM(cfg).cuda()
    ids = torch.randint(0, 32000, (1, 512), device="cuda")
    return model, ids


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--layers", default="12,48")
    args = ap.parse_args()
    import transformers
    doc = {"description": "host time per kernel (host_launch_gap.py)", "cpu": cpu_model(), "torch": torch.__version__,
           "transformers": transformers.__version__, "gpu": torch.cuda.get_device_name(0), "rows": []}
    doc["floor_us"] = floor_us()
    print(f"floor x.add_(1): {doc['floor_us']:.1f} us", flush=True)
    for layers in [int(v) for v in args.layers.split(",")]:
        model, ids = llama(layers)

        def forward():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return model(input_ids=ids, labels=ids).loss

        def forward_backward():
            forward().backward()
            model.zero_grad(set_to_none=True)

        for _ in range(3):
            forward_backward()
        fwd_s, fb_s = median_wall(forward, timed=10), median_wall(forward_backward, timed=10)
        gf, kf = kernel_time(forward)
        gfb, kfb = kernel_time(forward_backward)
        kb = kfb - kf
        row = {"layers": layers, "forward_s": fwd_s, "forward_backward_s": fb_s, "forward_kernels": kf, "backward_kernels": kb,
               "forward_gpu_s": gf, "forward_backward_gpu_s": gfb, "forward_us_per_kernel": fwd_s / kf * 1e6,
               "backward_us_per_kernel": (fb_s - fwd_s) / kb * 1e6}
        doc["rows"].append(row)
        print(f"llama {layers} layers: forward {fwd_s*1e3:.1f} ms / {kf} kernels = {row['forward_us_per_kernel']:.1f} us "
              f"(GPU {gf*1e3:.1f} ms); backward {(fb_s-fwd_s)*1e3:.1f} ms / {kb} = {row['backward_us_per_kernel']:.1f} us", flush=True)
        del model
        torch.cuda.empty_cache()
    with open(args.output, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
