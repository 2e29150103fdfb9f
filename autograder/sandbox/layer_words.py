"""The words for the sandbox's layers, in the reader's language.

The worker reports each layer as data: a dict with a stable `id` and the fields that layer has
(`{"id": "unprivileged_user", "uid": 200001}`), in its report's "layers" (in force) and
"missing" (refused, with why: an `errno`, an exception's `error` text, or a `why` id). The worker
runs beside student code and stays below the catalogues; here, on the trusted side, each id and
its fields become words through one template per id, so the sandbox line reads whole in every
language and tiers.py decides a tier from the ids alone, never from words.

An entry that is not such a dict, an id this module does not know, or fields its template cannot
take are shown as the id (or "?"): a report is shown, never trusted to format itself.
"""
from __future__ import annotations

from autograder.i18n import N_, _, _f
from autograder.sandbox.system_errors import system_error

# i18n: a layer of the sandbox, in force ("ABI" is Landlock's version; uid: the user id)
IN_FORCE = {
    "process_group": N_("process group"),
    "user_namespace": N_("user namespace"),
    "network_namespace": N_("network namespace"),
    "mount_namespace": N_("mount namespace"),
    "allowed_root": N_("filesystem: only what the interpreter needs ({paths} paths, read-only)"),
    "private_tmpfs": N_("private directory on tmpfs ({mib} MiB)"),
    "read_only_filesystem": N_("read-only filesystem"),
    "pid_namespace": N_("PID namespace"),
    "private_proc": N_("private /proc"),
    "unprivileged_user": N_("unprivileged user (uid {uid})"),
    "no_new_privs": "no_new_privs",  # the kernel's own name, in every language
    "subreaper": N_("subreaper"),
    "private_directory": N_("private directory"),
    "landlock_filesystem": N_("landlock filesystem (ABI {abi}: only what the interpreter needs read-only, its "
                              "directory read-write, nothing else)"),
    "landlock_network": N_("landlock network (no TCP bind or connect)"),
    "landlock_scope": N_("landlock scope (no signal or abstract socket outside)"),
    "seccomp": N_("seccomp (no sockets, no ptrace, no namespaces)"),
    "gpu": N_("GPU {name} (context started in {seconds:.2f} s before any call, TF32 off, {cap})"),
}

# the name of a layer the machine refused, where it differs from its name in force
NAMES = {
    "namespaces": N_("namespaces"),
    "sandbox": N_("sandbox"),
    "allowed_root": N_("allow-listed filesystem"),
    "private_dev_shm": N_("private /dev/shm"),
    "landlock_filesystem": N_("landlock filesystem"),
    "landlock_scope": N_("landlock scope"),
    "unprivileged_user": N_("unprivileged user"),
    "seccomp": N_("seccomp"),
    "rlimits": N_("rlimits"),
    "gpu": N_("GPU"),
}

# a refused layer whose words are more than "name (reason)"
REFUSED = {
    "user_namespace": N_("user namespace ({reason}): not root, so no other namespace either"),
}

# why a layer is missing, where no error of the system says it
WHY = {
    "not_linux": N_("not Linux"),
    "turned_off": N_("turned off: --sandbox off, for debugging only"),
    "portable": N_("no namespaces, Landlock or seccomp on {platform}: the code runs as the user who started it"),
    "not_on_this_platform": N_("not on this platform"),
    "unreadable": N_("{folder} is not readable by other users"),
    "landlock_abi": N_("ABI {abi} < 6"),
}

GPU_CAP = N_("GPU memory cap {cap:g} GiB of {total:.0f}")
NO_GPU_CAP = N_("no GPU memory cap")
RLIMIT = N_("rlimit {name}")  # a resource limit the worker could not set (its name: an identifier)
RLIMITS = N_("rlimits ({limits})")


def entry_id(entry) -> str:
    """The layer's id, or "" for an entry that is not one."""
    if isinstance(entry, dict) and isinstance(entry.get("id"), str):
        return entry["id"]
    return ""


def listing(items) -> str:
    """Items one after the other, as the line lists them (", " in English)."""
    return _(", ").join(items)


def _fill(template: str, entry: dict) -> str:
    fields = {key: value for key, value in entry.items() if key != "id"}
    if "folders" in fields and isinstance(fields["folders"], list):
        fields["folders"] = listing(str(folder) for folder in fields["folders"])
    if "cap" in fields:
        fields["cap"] = _gpu_cap(fields["cap"])
    try:
        return _f(template, **fields)
    except (KeyError, ValueError, TypeError, IndexError, AttributeError):
        return entry_id(entry) or "?"


def _gpu_cap(cap) -> str:
    """The GPU memory cap a worker set: {"gib": ..., "total_gib": ...}, or None for no cap."""
    if not isinstance(cap, dict):
        return _(NO_GPU_CAP)
    return _f(GPU_CAP, cap=cap.get("gib"), total=cap.get("total_gib"))


def in_force(entry) -> str:
    """The words for a layer the worker put in force."""
    key = entry_id(entry)
    template = IN_FORCE.get(key)
    if template is None:
        return key or "?"
    return _fill(template, entry)


def reason(entry: dict) -> str:
    """Why a layer is missing, or "" when the report does not say."""
    number, error, why = entry.get("errno"), entry.get("error"), entry.get("why")
    if isinstance(number, int) and number > 0:
        return system_error(number)
    if isinstance(error, str):
        return error  # an exception's own text, quoted as it came
    if isinstance(why, str) and why in WHY:
        return _fill(WHY[why], entry)
    return ""


def refused(entry) -> str:
    """The words for a layer the machine refused: its name, and why where the report says."""
    key = entry_id(entry)
    if not key:
        return "?"
    why = reason(entry)
    if key in REFUSED:
        return _fill(REFUSED[key], {"reason": why})
    template = NAMES.get(key) or IN_FORCE.get(key)
    name = _(template) if template and "{" not in template else key
    return _f("{layer} ({reason})", layer=name, reason=why) if why else name
