"""Section 09's cached decoding written out by its checks: a layer with a module's own weights (the student's,
through multihead_forward.own_layers) fed a sequence in chunks, with switches that reproduce the common mistakes
of a KV cache, and the names of those mistakes; the check, shared with section 10, that a cached call adds nothing
to state_dict. Shipped whole with the visible checks: it never imports
`solutions`."""
import torch

from autograder.core.harness import StudentFailure, expect
from autograder.i18n import N_, _, _f

LAYER = "MultiHeadAttentionCached"
UNSHIFTED = N_("the causal mask not offset by the cache (the new queries masked as if they stood at position 0): "
               "take the mask's rows num_cached:num_cached + num_tokens")
NO_MASK_CACHED = N_("no causal mask on a cached call: the tokens of a prompt see the later tokens of that prompt")
NOT_READ = N_("the cache never read: each call attends to its own tokens only")
BARE_CACHE = N_("the keys and values cached before the head split, then split with a bare view to "
                "(b, num_heads, T, head_dim) without the transpose: tokens and heads get mixed")
NOT_RESET = N_("reset_cache does not empty the cache: the next sequence still attends to the previous one's keys")
WRITTEN_WITHOUT = N_("forward with use_cache=False writes to the cache: the next cached call sees those tokens")
PERSISTENT_CACHE = N_("the cache registered persistent: state_dict then saves it with the weights (register cache_k "
                      "and cache_v with persistent=False)")
REPROJECTED = N_("every token projected again at each step (the inputs kept instead of their keys and values)")


def chunks_of(x, sizes):
    """x (b, T, d) cut along the tokens into pieces of these sizes."""
    return list(torch.split(x, list(sizes), dim=1))


def decode(own, x, sizes, *, mask: str = "offset", read: bool = True, bare: bool = False, kept=None):
    """The outputs, concatenated along the tokens, of a cached layer with own's weights (own_layers) fed x in
    chunks of `sizes` tokens, use_cache=True each time, without autograd.

    mask: "offset" (right: the causal mask's rows start at the number of cached tokens), "unshifted" (rows start
    at 0), "none" (no mask on a cached call). read=False: the cache is never read. bare: keys and values cached
    (b, T, d_out) and split with a bare view. kept: tokens (b, T0, d_in) already in the cache."""
    b, h, hd = x.shape[0], own.num_heads, own.head_dim
    with torch.no_grad():
        past = [kept] if kept is not None else []
        outs = []
        for part in chunks_of(x, sizes):
            n = part.shape[1]
            past = (past if read else []) + [part]
            seen = torch.cat(past, dim=1)  # (b, t, d_in): the same keys as projecting each chunk once
            t = seen.shape[1]

            def split(y, t=t):
                return y.reshape(b, h, t, hd) if bare else y.reshape(b, t, h, hd).transpose(1, 2)

            queries = own.W_query(part).reshape(b, n, h, hd).transpose(1, 2)  # (b, h, n, hd)
            keys, values = split(own.W_key(seen)), split(own.W_value(seen))  # (b, h, t, hd)
            scores = queries @ keys.transpose(-2, -1)  # (b, h, n, t)
            if mask != "none":
                shift = t - n if mask == "offset" else 0
                hidden = torch.ones(n, t, dtype=torch.bool).triu(1 + shift)
                scores = scores.masked_fill(hidden, float("-inf"))
            weights = torch.softmax(scores / hd**0.5, dim=-1)
            outs.append(own.out_proj((weights @ values).transpose(1, 2).reshape(b, n, h * hd)))
        return torch.cat(outs, dim=1)


def decode_mistakes(own, x, sizes, kept=None) -> dict:
    """Mistake name -> what a layer with that mistake and own's weights gives decoding x in chunks of `sizes`."""
    if own is None:
        return {}
    return {UNSHIFTED: decode(own, x, sizes, mask="unshifted", kept=kept),
            NO_MASK_CACHED: decode(own, x, sizes, mask="none", kept=kept),
            NOT_READ: decode(own, x, sizes, read=False, kept=kept),
            BARE_CACHE: decode(own, x, sizes, bare=True, kept=kept)}


def decoded(module, x, sizes, count_rows=()):
    """The student's layer fed x in chunks of `sizes` tokens with use_cache=True: (the outputs concatenated
    along the tokens, or the first one that is no tensor; each call's rows counted, Reply.rows)."""
    outs, rows = [], []
    for part in chunks_of(x, sizes):
        reply = module.run(part, use_cache=True, count_rows=count_rows)
        if not isinstance(reply.value, torch.Tensor) or reply.value.dim() != 3:
            return reply.value, rows
        outs.append(reply.value)
        rows.append(reply.rows)
    if len({out.shape[0] for out in outs}) != 1 or len({out.shape[2] for out in outs}) != 1:
        return outs[-1], rows
    return torch.cat(outs, dim=1), rows


def state_keys(module) -> set:
    """The names module.state_dict() holds (filled into a plain dict, which the wire carries; none where state_dict
    gives no dict)."""
    value = module.call_method("state_dict", destination={})
    return set(value) if isinstance(value, dict) else set()


def expect_cache_not_saved(module, name: str, x) -> None:
    """x fed to the module with use_cache=True adds nothing to its state_dict: a cache is no weight (sections 09 and
    10 register their cache buffers with persistent=False, as their notebooks say)."""
    before = state_keys(module)
    try:
        module(x, use_cache=True)
    except StudentFailure:
        return  # a cached call that fails: the decoding checks grade that, not this one
    added = sorted(state_keys(module) - before)
    expect(not added, _f("after forward(x, use_cache=True), {name}.state_dict() also holds {names}: this looks like "
                         "{mistake}", name=name, names=", ".join(added), mistake=_(PERSISTENT_CACHE)),
           mistake=PERSISTENT_CACHE)
