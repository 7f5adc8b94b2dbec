"""Writes DeepSeek-V3's byte-level BPE vocabulary as ctxd embeds it: every token's bytes,
in rank (merge) order, each as a one-byte length then the bytes, gzip-compressed.
Usage: convert.py tokenizer.json out.gz"""
import gzip, json, sys

tokenizer = json.load(open(sys.argv[1], encoding="utf-8"))
model = tokenizer["model"]
assert model["type"] == "BPE"
# GPT-2's byte-to-unicode table, which byte-level BPE vocabularies are written in.
printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
chars = printable[:]
extra = 0
for byte in range(256):
    if byte not in printable:
        printable.append(byte)
        chars.append(256 + extra)
        extra += 1
char_to_byte = {chr(c): b for b, c in zip(printable, chars)}

tokens = []
for text, rank in sorted(model["vocab"].items(), key=lambda item: item[1]):
    if any(ch not in char_to_byte for ch in text):
        continue  # a special token (<｜begin▁of▁sentence｜>, ...): never produced from text
    tokens.append(bytes(char_to_byte[ch] for ch in text))
# Merges must create tokens in rank order for rank-order merging to equal merge-list order.
rank_of = {t: i for i, t in enumerate(tokens)}
previous = -1
for merge in model["merges"]:
    a, b = merge.split(" ")
    merged = bytes(char_to_byte[ch] for ch in a + b)
    assert rank_of[merged] > previous
    previous = rank_of[merged]
out = bytearray()
for token in tokens:
    assert 0 < len(token) < 256
    out.append(len(token))
    out += token
with gzip.GzipFile(sys.argv[2], "wb", compresslevel=9, mtime=0) as f:
    f.write(bytes(out))
print(len(tokens), "tokens,", len(out), "bytes")
