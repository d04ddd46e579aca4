"""mpc-sysid's report: the identified parameters with their uncertainty and the fits'
residuals (a summary mapping, Markdown, a console table), and the before/after plots of the
gantry runs' joints (logged, simulated on the nominal model, simulated on the identified one:
:mod:`mpc.app.sysid.simulate`), drawn only where matplotlib is installed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mpc.app.sysid.identify import Identification
from mpc.app.sysid.simulate import simulate
from robots.overlay import Overlay

#: Seconds of each gantry run shown in the plots (from the middle of the run).
WINDOW = 4.0


def summary(ident: Identification, seconds: float) -> dict:
    """Everything identified, as a JSON-able mapping."""
    fit = ident.actuators
    joints = {}
    for j in fit.joints:
        p0 = ident.nominal.joints[j.joint].as_dict()
        joints[j.joint] = {k: {"value": j.values[k], "std": j.std[k], "nominal": p0.get(k)}
                           for k in j.values}
        joints[j.joint]["residual_rms_Nm"] = j.residual_rms
        joints[j.joint]["torque_rms_Nm"] = j.torque_rms
        joints[j.joint]["samples"] = j.samples
    out = {"robot": ident.robot, "identify_s": round(seconds, 3),
           "runs": {"gantry": [str(r.run_dir) for r in ident.gantry],
                    "other": [str(r.run_dir) for r in ident.other]},
           "delay": {"value": ident.delay, "std": fit.delay_std,
                     "loop_delay": fit.delay, "sensor_latency": ident.sensor_latency},
           "joints": joints}
    if ident.trunk is not None:
        t = ident.trunk
        out["trunk"] = {"mass": {"value": t.mass, "std": t.mass_std,
                                 "nominal": ident.nominal.trunk_mass},
                        "com": {"value": t.com.tolist(), "std": t.com_std.tolist(),
                                "nominal": list(ident.nominal.trunk_com)},
                        "residual_rms_N": t.residual_rms, "force_rms_N": t.force_rms,
                        "samples": t.samples}
    return out


def table(s: dict) -> str:
    """The summary as a console/Markdown table."""
    lines = [f"{s['robot']}: identified in {s['identify_s']:.1f} s",
             f"delay {1e3 * s['delay']['value']:.2f} ± {1e3 * s['delay']['std']:.2f} ms "
             f"(loop {1e3 * s['delay']['loop_delay']:.2f} ms less "
             f"{1e3 * s['delay']['sensor_latency']:.1f} ms sensor latency)", "",
             "| joint | kp (N m/rad) | damping (N m s/rad) | frictionloss (N m) | "
             "armature (kg m²) | residual / torque RMS (N m) |",
             "|---|---|---|---|---|---|"]
    for name, j in s["joints"].items():
        cells = [f"{j[k]['value']:.4g} ± {j[k]['std']:.2g} ({j[k]['nominal']:.4g})"
                 for k in ("kp", "damping", "frictionloss", "armature")]
        lines.append(f"| {name} | " + " | ".join(cells)
                     + f" | {j['residual_rms_Nm']:.3f} / {j['torque_rms_Nm']:.3f} |")
    lines.append("")
    lines.append("Each cell: identified ± one standard deviation (nominal).")
    if "trunk" in s:
        t = s["trunk"]
        com = ", ".join(f"{1e3 * v:.1f} ± {1e3 * e:.1f}"
                        for v, e in zip(t["com"]["value"], t["com"]["std"], strict=True))
        lines += ["", f"trunk mass {t['mass']['value']:.3f} ± {t['mass']['std']:.3f} kg "
                  f"(nominal {t['mass']['nominal']:.3f}); centre of mass [{com}] mm (nominal "
                  f"[{', '.join(f'{1e3 * v:.1f}' for v in t['com']['nominal'])}]); residual "
                  f"{t['residual_rms_N']:.2f} N RMS of {t['force_rms_N']:.2f} N"]
    return "\n".join(lines)


def markdown(s: dict, plots: list[tuple[str, float, float]]) -> str:
    """The report page: the table, and the plots with the output error before and after."""
    out = ["# System identification", "", table(s), ""]
    if plots:
        out += ["## Joints simulated through the logged commands", "",
                "RMS of the simulated minus the logged joint angles over the whole run, on "
                "the nominal model (before) and on the identified one (after):", "",
                "| plot | before (rad) | after (rad) |", "|---|---|---|"]
        out += [f"| ![{name}]({name}) | {b:.4f} | {a:.4f} |" for name, b, a in plots]
    return "\n".join(out) + "\n"


def plots(ident: Identification, overlay: Overlay, folder: Path
          ) -> list[tuple[str, float, float]]:
    """One PNG per gantry run in ``folder``: each joint's logged angle, simulated before and
    after, over WINDOW seconds; returns (file name, RMS before, RMS after) per run, nothing
    without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib.figure import Figure
    except ImportError:
        return []
    before_overlay = Overlay(ident.robot, {}, 0.0, source="<nominal>")
    out = []
    for i, data in enumerate(ident.gantry):
        before = simulate(data, before_overlay, ident.nominal, ident.sensor_latency)
        after = simulate(data, overlay, ident.nominal, ident.sensor_latency)
        n = len(data.joints)
        fig = Figure(figsize=(12, 2.0 * ((n + 2) // 3)))
        axes = fig.subplots((n + 2) // 3, 3, sharex=True, squeeze=False).ravel()
        mid = len(data.t) // 2
        w = slice(mid, min(len(data.t), mid + int(WINDOW / data.dt)))
        t = data.t[w] - data.t[0]
        for j, ax in enumerate(axes[:n]):
            ax.plot(t, data.q_raw[w, j], "k", lw=1.2, label="logged")
            ax.plot(t, before[w, j], "tab:red", lw=0.8, label="nominal model")
            ax.plot(t, after[w, j], "tab:blue", lw=0.8, ls="--", label="identified")
            ax.set_title(data.joints[j], fontsize=8)
        axes[0].legend(fontsize=7)
        fig.supxlabel("time in the run (s)")
        fig.supylabel("joint angle (rad)")
        fig.tight_layout()
        name = f"joints_{i}.png"
        fig.savefig(folder / name, dpi=100)
        out.append((name, float(np.sqrt(np.mean((before - data.q_raw) ** 2))),
                    float(np.sqrt(np.mean((after - data.q_raw) ** 2)))))
    return out
