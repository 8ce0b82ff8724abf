#!/usr/bin/env python3
import csv, json, os, sys, time
from openai import OpenAI

client = OpenAI()  # reads OPENAI_API_KEY


def prepare(src, dst, model="gpt-4o-mini"):
    with open(src) as f, open(dst, "w") as out:
        for i, row in enumerate(csv.DictReader(f)):
            out.write(json.dumps({"custom_id": f"row-{i}", "method": "POST", "url": "/v1/chat/completions",
                                  "body": {"model": model, "messages": [{"role": "user", "content": row["prompt"]}]}}) + "\n")


def submit(path):
    up = client.files.create(file=open(path, "rb"), purpose="batch")
    b = client.batches.create(input_file_id=up.id, endpoint="/v1/chat/completions", completion_window="24h")
    print(b.id)


def status(bid):
    print(client.batches.retrieve(bid).status)


def fetch(bid, dst):
    b = client.batches.retrieve(bid)
    if b.status != "completed":
        sys.exit(f"not ready: {b.status}")
    open(dst, "wb").write(client.files.content(b.output_file_id).read())


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    {"prepare": prepare, "submit": submit, "status": status, "fetch": fetch}[cmd](*args)
