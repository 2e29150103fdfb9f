"""Section 11's sliding-window attention written out by its checks, with a layer's own weights, and what its
common wrong versions return: the band mask off by one or transposed, the diagonal hidden, no window at all; with
the KV cache, the band not shifted by the cached tokens and the cache trimmed from the wrong end. Shipped whole
with the visible checks: it never imports `solutions`; its messages are section 11's (autograder/i18n/catalogues.py).
"""
import torch

from autograder.i18n import N_

WIDER_BY_ONE = N_("the window off by one: key j hidden only where j < i - window, so each query sees window + 1 "
                  "keys (it sees i - window < j <= i)")
DIAGONAL_HIDDEN = N_("the diagonal hidden too (each query must see its own token: j > i, not j >= i)")
TRANSPOSED = N_("the mask transposed: each query sees the next tokens instead of the previous ones (the future seen)")
NO_WINDOW = N_("no window: the causal mask alone (keys too far back must be hidden too: j <= i - window)")
NOT_OFFSET = N_("the band not shifted by the cached tokens: with C tokens in the cache, the new query i stands at "
                "index C + i among the keys")
NO_BAND_ON_CACHE = N_("every cached key visible to the new tokens: the band must hide the cached keys that fell out "
                      "of the window")
KEPT_OLDEST = N_("the cache trimmed from the wrong end: [:, :, :window] keeps the oldest tokens; keep the newest, "
                 "[:, :, -window:]")
NOT_TRIMMED = N_("the cache not trimmed: it grows with every token instead of keeping the last window tokens")
DROPPED_BEFORE = N_("the cache cut by one token before appending instead of trimmed to the last window tokens after "
                    "it: a prompt longer than the window stays in the cache whole")
ONE_SHORT = N_("the cache trimmed to window - 1 tokens: keep the last window tokens")

SYMMETRIC = N_("a symmetric band, |i - j| >= window: the next window - 1 tokens stay visible too (the future seen); "
               "hide every key after its query as well (j > i)")
GIVEN_TO_SDPA_AS_IS = N_("the band mask handed as it is to F.scaled_dot_product_attention, whose boolean attn_mask "
                         "means True = may attend, where the course's True means hidden: pass ~mask")

# mask kinds: the contract's, and its common wrong versions
KINDS = {"band": None, "wider": WIDER_BY_ONE, "diagonal": DIAGONAL_HIDDEN, "transposed": TRANSPOSED,
         "causal": NO_WINDOW, "symmetric": SYMMETRIC}
# and a layer's: the band also handed to SDPA as is (a mask function returning it inverted has no SDPA to blame)
LAYER_KINDS = {**KINDS, "inverted": GIVEN_TO_SDPA_AS_IS}


def band(num_queries: int, num_keys: int, window: int, kind: str = "band", device="cpu") -> torch.Tensor:
    """(num_queries, num_keys) bool, True = hidden: the new queries are the last num_queries of the keys' tokens
    (query i at index num_keys - num_queries + i), each seeing its own token and the window - 1 before it.
    kind: the contract's "band", or a common wrong mask ("wider", "diagonal", "transposed", "causal", "symmetric",
    "inverted")."""
    query = torch.arange(num_queries, device=device)[:, None] + (num_keys - num_queries)
    key = torch.arange(num_keys, device=device)[None, :]
    if kind == "transposed":
        query, key = key - (num_keys - num_queries), query - (num_keys - num_queries)
    future = key >= query if kind == "diagonal" else key >= query + window if kind == "symmetric" else key > query
    if kind == "causal":
        return future
    far = key < query - window if kind == "wider" else key <= query - window
    return ~(future | far) if kind == "inverted" else future | far


def attend(own, queries, keys, values, hidden) -> torch.Tensor:
    """(b, h, T, hd) queries against (b, h, K, hd) keys and values under `hidden` (T, K); heads combined, out_proj."""
    b, _, t, _ = queries.shape
    scores = (queries @ keys.transpose(-2, -1)).masked_fill(hidden, float("-inf"))
    weights = torch.softmax(scores / own.head_dim ** 0.5, dim=-1)
    return own.out_proj((weights @ values).transpose(1, 2).reshape(b, t, own.d_out))


def projected(own, x):
    """x's queries, keys and values, each (b, num_heads, T, head_dim)."""
    b, t, _ = x.shape
    return [layer(x).reshape(b, t, own.num_heads, own.head_dim).transpose(1, 2)
            for layer in (own.W_query, own.W_key, own.W_value)]


def windowed(own, x, window: int, kind: str = "band") -> torch.Tensor:
    """The layer's forward without the cache (own: multihead_forward.own_layers of the student's parameters)."""
    with torch.no_grad():
        queries, keys, values = projected(own, x)
        t = x.shape[1]
        return attend(own, queries, keys, values, band(t, t, window, kind, x.device))


def decoded(own, x, window: int, sizes, offset: str = "shifted", keep: str = "newest") -> tuple:
    """The layer's forward with the cache, x fed in pieces of `sizes` tokens: (the outputs concatenated, the
    cache's size after each piece). offset: "shifted" (the contract), "top_left" (the band's first rows, not
    shifted by the cache), "new_only" (the band among the new tokens, every cached key visible). keep: "newest"
    (the last window), "oldest" (the first window), "all" (never trimmed), "one_short" (the last window - 1)."""
    cache, outputs, cached_sizes, start = None, [], [], 0
    with torch.no_grad():
        for size in sizes:
            queries, keys, values = projected(own, x[:, start:start + size])
            start += size
            if cache is not None:
                keys, values = torch.cat([cache[0], keys], dim=2), torch.cat([cache[1], values], dim=2)
            hidden = band(size, keys.shape[2], window, device=x.device)
            if offset == "top_left":
                hidden = band(keys.shape[2], keys.shape[2], window, device=x.device)[:size]
            elif offset == "new_only":
                hidden = torch.cat([torch.zeros(size, keys.shape[2] - size, dtype=torch.bool, device=x.device),
                                    band(size, size, window, device=x.device)], dim=1)
            outputs.append(attend(own, queries, keys, values, hidden))
            kept = {"newest": slice(-window, None), "oldest": slice(0, window), "all": slice(None),
                    "one_short": slice(-(window - 1), None) if window > 1 else slice(0, 0)}[keep]
            cache = (keys[:, :, kept], values[:, :, kept])
            cached_sizes.append(cache[0].shape[2])
    return torch.cat(outputs, dim=1), cached_sizes


def decode_mistakes(own, x, window: int, sizes) -> dict:
    """What the common wrong caches return on the same pieces: name -> outputs."""
    return {NOT_OFFSET: decoded(own, x, window, sizes, offset="top_left")[0],
            NO_BAND_ON_CACHE: decoded(own, x, window, sizes, offset="new_only")[0],
            KEPT_OLDEST: decoded(own, x, window, sizes, keep="oldest")[0]}


def size_mistake(sizes, right) -> str:
    """The named mistake the cache's sizes after each call show, or ""."""
    if any(got is not None and want is not None and got > want for got, want in zip(sizes, right)):
        return DROPPED_BEFORE if len(set(sizes[1:])) == 1 and len(sizes) > 2 else NOT_TRIMMED
    window = max(right)
    if window > 1 and all(got == min(want, window - 1) for got, want in zip(sizes, right)):
        return ONE_SHORT
    return ""
