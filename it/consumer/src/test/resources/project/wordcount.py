"""Counts the words of a text file: python3 wordcount.py FILE prints 'word count' lines, most frequent first."""
import re
import sys


def count(text):
    counts = {}
    for word in re.findall(r"[a-z']+", text.lower()):
        counts[word] = counts.get(word, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        for word, n in count(f.read()):
            print(word, n)
