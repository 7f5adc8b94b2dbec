"""Python tiktoken counting the bench's texts, for `cargo bench --bench core`'s counting part.

Run by the bench (benches/parts/counting.rs), never by hand:

    PYTHON benches/parts/tiktoken_counts.py DIR

DIR holds what the bench wrote: `texts.json` ({"corpus": [str], "inputs": {name: str}}) and,
per encoding, `NAME.tokens`: the vocabulary ctxd embeds (bpe-openai's), one token a line in
rank order, as hex. From those lines this script writes the vocabulary file in tiktoken's
format and has tiktoken load it with the SHA-256 tiktoken itself expects of OpenAI's file:
tiktoken accepts it only if it is byte for byte the published vocabulary. Pattern and special
tokens are tiktoken's own (`tiktoken_ext.openai_public`).

Then it answers requests on stdin, one a line, each with one line on stdout:
    corpus NAME       -> "<tokens> <seconds> <cpu seconds>"  every corpus text, in order
    input NAME INPUT  -> "<tokens> <seconds> <cpu seconds>"  one of the inputs
each with encode_ordinary. Seconds are time.perf_counter() around the encoding calls only,
CPU seconds time.thread_time() (this thread's CPU time) around the same. The first line it prints is
"ready tiktoken <version>", or "error <reason>" before it exits.
"""

import base64
import hashlib
import json
import os
import sys
import tempfile
import time


def main() -> None:
    folder = sys.argv[1]
    try:
        import tiktoken
        import tiktoken.load
        from tiktoken_ext import openai_public
    except ImportError as error:
        print(f"error tiktoken is not importable here: {error}", flush=True)
        return

    def load_local(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        # tiktoken asks for its vocabulary by address; serve the bench's copy instead,
        # written in tiktoken's format, and check the hash tiktoken gives for the address.
        name = blobpath.rsplit("/", 1)[-1].removesuffix(".tiktoken")
        with open(os.path.join(folder, f"{name}.tokens")) as lines:
            tokens = [bytes.fromhex(line.strip()) for line in lines if line.strip()]
        data = b"".join(
            base64.b64encode(token) + b" " + str(rank).encode() + b"\n"
            for rank, token in enumerate(tokens)
        )
        actual = hashlib.sha256(data).hexdigest()
        if expected_hash is None or actual != expected_hash:
            raise ValueError(f"{name}: sha256 {actual}, tiktoken expects {expected_hash}")
        path = os.path.join(folder, f"{name}.tiktoken")
        with open(path, "wb") as out:
            out.write(data)
        # A fresh cache folder, so tiktoken reads the file and checks the hash itself too.
        os.environ["TIKTOKEN_CACHE_DIR"] = tempfile.mkdtemp(dir=folder)
        return tiktoken.load.load_tiktoken_bpe(path, expected_hash=expected_hash)

    openai_public.load_tiktoken_bpe = load_local
    with open(os.path.join(folder, "texts.json"), encoding="utf-8") as texts_file:
        texts = json.load(texts_file)
    encodings = {}
    try:
        for name in ("o200k_base", "cl100k_base"):
            encodings[name] = tiktoken.Encoding(**getattr(openai_public, name)())
    except ValueError as error:
        print(f"error {error}", flush=True)
        return
    print(f"ready tiktoken {tiktoken.__version__}", flush=True)

    for line in sys.stdin:
        words = line.split(maxsplit=2)
        if not words:
            continue
        encode = encodings[words[1]].encode_ordinary
        chosen = texts["corpus"] if words[0] == "corpus" else [texts["inputs"][words[2].strip()]]
        started, cpu = time.perf_counter(), time.thread_time()
        tokens = 0
        for text in chosen:
            tokens += len(encode(text))
        seconds, cpu = time.perf_counter() - started, time.thread_time() - cpu
        print(f"{tokens} {seconds:.6f} {cpu:.6f}", flush=True)


if __name__ == "__main__":
    main()
