#!/usr/bin/env python3
"""Same-card anchor of the GPU device check (issue 17): the seed's method, the OOF model of
The OOF benchmark problem written in PyTorch with autograd gradients (B. Nikolic, arXiv 1805.07439), timed on
the GPU per cost-and-gradient evaluation and to solution (scipy BFGS, tol 1e-8, as the seed; torch's
L-BFGS when scipy is missing), for grids 256..2048. One JSON object per line (kind "torch");
gpu/run-device-checks.sh puts them beside wfs-device-check's rows and summary.py compares eval_ms.

  python3 bench/torch_oof.py [--grid 256,512,1024,2048] [--order 8] [--precision double,float]
                             [--eval-repeat 20] [--budget SECONDS] [--no-solve]
                             [--reference tests/data/oof-reference-values.json] [--device cuda|cpu]

With --reference the model is first held to the spec's reference values (cost 1e-10, gradient 1e-6
relative), one row of kind "torch-verify"; no timing is reported for a model that fails them.
"""
import argparse
import json
import math
import sys
import time


def row(**values):
    print(json.dumps(dict(kind="torch", **values)), flush=True)


def radial_coefficients(n, m):
    out = []
    for s in range((n - m) // 2 + 1):
        c = math.factorial(n - s) / (math.factorial(s) * math.factorial((n + m) // 2 - s) * math.factorial((n - m) // 2 - s))
        out.append(((-1) ** s * c, n - 2 * s))
    return out


class Oof:
    """The OOF benchmark's model on an NN x NN grid; parameters c_1 .. c_{J-1}, x0, y0, amp."""

    def __init__(self, torch, grid, order, dtype, device, seed=20180518):
        self.torch = torch
        t = torch
        coords = t.linspace(-4.0, 4.0, grid, dtype=dtype, device=device)  # both end points: spacing 8/(NN-1)
        self.x, self.y = t.meshgrid(coords, coords, indexing="ij")  # row index -> x, column index -> y
        r = t.hypot(self.x, self.y)
        phi = t.atan2(self.y, self.x)
        self.dish = (r <= 1.0).to(dtype)
        terms = []
        for n in range(order + 1):
            for l in range(-n, n + 1, 2):  # OSA/ANSI: j = (n (n + 2) + l) / 2
                m = abs(l)
                z = sum(c * r ** p for c, p in radial_coefficients(n, m))
                z = z * (t.cos(m * phi) if l > 0 else t.sin(m * phi) if l < 0 else 1.0)
                terms.append(z)
        self.basis = t.stack(terms[1:])  # piston c_0 fixed at 0
        self.sigma = 0.72
        focal, dish_radius, dz, wavelength = 14.4, 2.8, 0.05, 1.1e-3
        u = t.hypot(self.x * dish_radius, self.y * dish_radius) / (2 * focal)
        pf = (1 - u ** 2) / (1 + u ** 2) - 1
        self.defocus = t.stack([t.zeros_like(pf), pf * (-dz) / wavelength * 2 * math.pi, pf * dz / wavelength * 2 * math.pi])
        self.parameters = self.basis.shape[0] + 3
        # Benchmark data: the unaberrated model plus the spec's noise, one max over the whole stack.
        with t.no_grad():
            truth = self.start()
            p_true = self.beams(truth)
            g = t.Generator(device=device)
            g.manual_seed(seed)
            noise1 = t.randn(p_true.shape, generator=g, dtype=dtype, device=device)
            noise2 = t.randn(p_true.shape, generator=g, dtype=dtype, device=device)
            self.data = p_true * (1 + 0.01 * noise1) + 0.024 * p_true.max() * noise2

    def start(self):
        p = self.torch.zeros(self.parameters, dtype=self.x.dtype, device=self.x.device)
        p[-1] = 1.0  # p0 = (0, ..., 0, 0, 0, 1)
        return p

    def beams(self, p):
        t = self.torch
        phase = t.tensordot(p[:-3], self.basis, dims=1)
        x0, y0, amp = p[-3], p[-2], p[-1]
        a = amp * t.exp(-((self.x - x0) ** 2 + (self.y - y0) ** 2) / (2 * self.sigma ** 2)) * self.dish
        field = a * t.exp(1j * (phase + self.defocus))
        s = t.fft.fftshift(t.fft.ifft2(t.fft.ifftshift(field, dim=(-2, -1))), dim=(-2, -1))  # ifft2 includes 1/NN^2
        return s.real ** 2 + s.imag ** 2

    def cost(self, p):
        return ((self.data - self.beams(p)) ** 2).sum()

    def cost_and_gradient(self, p):
        p = p.detach().requires_grad_(True)
        loss = self.cost(p)
        (grad,) = self.torch.autograd.grad(loss, p)
        return loss.detach(), grad


def synchronize(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def verify(torch, path, device):
    """The spec's reference cases (noise-free data at the truth; cost and gradient at the start)."""
    with open(path) as f:
        cases = json.load(f)["cases"]
    worst_cost = worst_gradient = 0.0
    for c in cases:
        model = Oof(torch, c["grid"], c["order"], torch.float64, device)
        with torch.no_grad():
            model.data = model.beams(torch.tensor(c["truth"], dtype=torch.float64, device=device))
        loss, grad = model.cost_and_gradient(torch.tensor(c["start"], dtype=torch.float64, device=device))
        ref = torch.tensor(c["gradient"], dtype=torch.float64, device=device)
        worst_cost = max(worst_cost, abs(float(loss) - c["loss"]) / abs(c["loss"]))
        excess = ((grad - ref).abs() - (1e-6 * ref.abs()).clamp_min(1e-18)).max()
        worst_gradient = max(worst_gradient, float(((grad - ref).abs() / ref.abs().clamp_min(1e-18)).max()))
        if float(excess) > 0:
            worst_gradient = max(worst_gradient, 1.0)
    ok = worst_cost <= 1e-10 and worst_gradient <= 1e-6
    print(json.dumps(dict(kind="torch-verify", ok=ok, cases=len(cases), cost_rel=worst_cost, gradient_rel=worst_gradient)), flush=True)
    return ok


def time_evaluations(torch, model, repeat):
    p = model.start()
    for _ in range(3):
        model.cost_and_gradient(p)
    synchronize(torch, p.device)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        model.cost_and_gradient(p)
        synchronize(torch, p.device)
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2], times[len(times) // 4], times[(3 * len(times)) // 4]


def solve(torch, model, max_iterations=2000):
    """Time to solution from the spec's start: scipy BFGS (tol 1e-8) with autograd gradients, as the seed."""
    evaluations = 0
    try:
        import numpy as np
        from scipy.optimize import minimize

        def f(v):
            nonlocal evaluations
            evaluations += 1
            loss, grad = model.cost_and_gradient(torch.as_tensor(v, dtype=model.x.dtype, device=model.x.device))
            return float(loss), grad.double().cpu().numpy()

        synchronize(torch, model.x.device)
        t0 = time.perf_counter()
        result = minimize(f, model.start().double().cpu().numpy(), jac=True, method="BFGS", tol=1e-8,
                          options={"maxiter": max_iterations})
        seconds = time.perf_counter() - t0
        return dict(solve_s=seconds, iterations=int(result.nit), evaluations=evaluations, final_cost=float(result.fun),
                    optimizer="scipy BFGS tol 1e-8, torch autograd gradients", message=str(result.message))
    except ImportError:
        p = model.start().clone().requires_grad_(True)
        optimizer = torch.optim.LBFGS([p], max_iter=max_iterations, tolerance_grad=1e-8, tolerance_change=1e-15,
                                      history_size=50, line_search_fn="strong_wolfe")

        def closure():
            nonlocal evaluations
            evaluations += 1
            optimizer.zero_grad()
            loss = model.cost(p)
            loss.backward()
            return loss

        synchronize(torch, model.x.device)
        t0 = time.perf_counter()
        optimizer.step(closure)
        synchronize(torch, model.x.device)
        seconds = time.perf_counter() - t0
        iterations = optimizer.state[optimizer._params[0]].get("n_iter", None)
        return dict(solve_s=seconds, iterations=iterations, evaluations=evaluations, final_cost=float(model.cost(p.detach())),
                    optimizer="torch L-BFGS (strong Wolfe), tolerance_grad 1e-8 (scipy not installed)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grid", default="256,512,1024,2048")
    ap.add_argument("--order", type=int, default=8)
    ap.add_argument("--precision", default="double,float")
    ap.add_argument("--eval-repeat", type=int, default=20)
    ap.add_argument("--budget", type=float, default=float("inf"), help="seconds: no new row is started after this")
    ap.add_argument("--no-solve", action="store_true", help="time evaluations only")
    ap.add_argument("--reference", help="spec reference values (JSON) the model must reproduce before timing")
    ap.add_argument("--device", default="cuda", help="cuda (the anchor) or cpu (to try the script without a GPU)")
    args = ap.parse_args()
    start = time.perf_counter()
    try:
        import torch
    except ImportError as e:
        row(skipped=True, reason=f"PyTorch is not installed ({e})")
        return 0
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        row(skipped=True, reason="PyTorch sees no CUDA device")
        return 0
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    if args.reference and not verify(torch, args.reference, device):
        row(skipped=True, reason="the PyTorch model does not reproduce the spec's reference values: no timing")
        return 1
    grids = [int(g) for g in args.grid.split(",")]
    precisions = args.precision.split(",")
    left_out = 0
    for precision in precisions:
        for grid in grids:
            if time.perf_counter() - start > args.budget:
                left_out += 1
                continue
            dtype = torch.float64 if precision == "double" else torch.float32
            try:
                model = Oof(torch, grid, args.order, dtype, device)
                median, p25, p75 = time_evaluations(torch, model, args.eval_repeat)
                values = dict(grid=grid, order=args.order, precision=precision, eval_ms=median, eval_p25_ms=p25, eval_p75_ms=p75,
                              device=name, torch=torch.__version__)
                # To solution in float64 only (the seed's runs), and only when about 500 evaluations fit the budget.
                remaining = args.budget - (time.perf_counter() - start)
                if not args.no_solve and precision == "double" and remaining > 500 * median * 1e-3:
                    values.update(solve(torch, model))
                row(**values)
                del model
                if device.type == "cuda":
                    torch.cuda.empty_cache()
            except Exception as e:  # out of memory at a large grid must not lose the other rows
                row(grid=grid, precision=precision, error=f"{type(e).__name__}: {e}")
                if device.type == "cuda":
                    torch.cuda.empty_cache()
    if left_out:
        print(json.dumps(dict(kind="trimmed", bench="torch", rows_skipped=left_out, budget_s=args.budget)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
