"""Measuring one computation: its result and the peak memory it added, in a child process.

:func:`isolated` runs a function in a forked child (it sees the parent's arrays without copying
them) and returns what the function returned plus ``peak_bytes``: the child's resident-set
high-water mark above its resident set when it started -- what the computation itself held at its
peak, BLAS buffers and temporaries included, the parent's data not counted.  Linux resets the
high-water mark through ``/proc/self/clear_refs``; where that is missing (or fork is), the
function runs in this process and ``peak_bytes`` is tracemalloc's peak (numpy and Python
allocations only), and ``peak_source`` says which.

A child also isolates failures: one that runs past ``timeout`` is killed and one killed by the
kernel (out of memory) is reported, both as :class:`MeasureError`, while the caller goes on.

Examples
--------
>>> import numpy as np
>>> from nystrom_bench import profiling
>>> out = profiling.isolated(lambda: {"total": float(np.ones(10**6).sum())})
>>> out["total"], out["peak_bytes"] > 0, out["peak_source"] in ("rss", "tracemalloc")
(1000000.0, True, True)
"""

from __future__ import annotations

import os
import sys

__all__ = ["isolated", "MeasureError", "rss_bytes"]


class MeasureError(RuntimeError):
    """The measured computation failed, ran past its time limit, or its process was killed."""


def _status(field):
    """A ``VmRSS``/``VmHWM`` line of /proc/self/status in bytes, or None."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def rss_bytes():
    """This process's resident set size in bytes (None where /proc is missing)."""
    return _status("VmRSS")


def _reset_peak():
    """Reset the high-water mark to the current RSS; the RSS, or None where the kernel does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return None
    return rss_bytes()


def _can_fork():
    return sys.platform.startswith("linux") and hasattr(os, "fork") and os.path.exists("/proc/self/clear_refs")


def _child(conn, fn):
    try:
        base = _reset_peak()
        out = dict(fn())
        peak = _status("VmHWM")
        conn.send(("ok", out, None if base is None or peak is None else max(peak - base, 0)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises it there
        conn.send(("error", f"{type(exc).__name__}: {exc}", None))
    finally:
        conn.close()


def _in_process(fn):
    import tracemalloc

    tracemalloc.start()
    try:
        out = dict(fn())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return {**out, "peak_bytes": peak, "peak_source": "tracemalloc"}


def isolated(fn, timeout=None, fork=None):
    """Run ``fn()`` (returning a dict of picklable values) in a forked child; add its peak memory.

    Parameters
    ----------
    fn : callable
        No arguments; returns a mapping (e.g. timings and scores).  It runs in the child, so what it
        changes in memory is lost: return what you need.
    timeout : float or None
        Seconds before the child is killed (then :class:`MeasureError`).
    fork : bool or None
        None: fork where the peak can be measured (Linux); False: run here with tracemalloc.

    Returns
    -------
    dict
        ``fn``'s mapping plus ``peak_bytes`` and ``peak_source`` ("rss" or "tracemalloc").

    Raises
    ------
    MeasureError
        ``fn`` raised (its type and message are given), ran past ``timeout``, or its process died.
    """
    if fork is None:
        fork = _can_fork()
    if not fork:
        try:
            return _in_process(fn)
        except Exception as exc:
            raise MeasureError(f"{type(exc).__name__}: {exc}") from exc
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn), daemon=True)
    proc.start()
    send.close()
    try:
        if not recv.poll(timeout):
            proc.kill()
            proc.join()
            raise MeasureError(f"ran past its time limit of {timeout:g} s and was stopped")
        try:
            status, out, peak = recv.recv()
        except EOFError:
            proc.join()
            code = proc.exitcode
            why = " (killed: out of memory?)" if code == -9 else ""
            raise MeasureError(f"its process died with exit code {code}{why}") from None
    finally:
        recv.close()
    proc.join()
    if status != "ok":
        raise MeasureError(out)
    return {**out, "peak_bytes": peak, "peak_source": "rss" if peak is not None else "none"}
