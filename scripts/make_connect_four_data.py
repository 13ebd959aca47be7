"""Builds the Connect Four package data from ../shared/data (run from the repository root):

* jaxgames/data/connect_four_book.npz: the 8-ply opening book (every 7x6 position with at most
  8 stones and no winner, 258,614 of them) as sorted bitboard keys with exact scores;
* jaxgames/data/uci_connect4.npz: the UCI Connect-4 evaluation set, the published rows in the
  published order, labelled from that book (see jaxgames.datasets).

    python scripts/make_connect_four_data.py [--shared ../shared/data]
"""

from __future__ import annotations

import argparse
import gzip
import pathlib

import numpy as np

from jaxgames import datasets
from jaxgames.opponents import connect_four as c4


def read_book(path: pathlib.Path) -> tuple[np.ndarray, np.ndarray]:
    """(boards int8[N, 6, 7] in the game's encoding, scores int8[N]) from the shared CSV."""
    with gzip.open(path, "rt") as f:
        header = f.readline().strip()
        if header != "board,score":
            raise ValueError(f"{path}: unexpected header {header!r}")
        rows = [line.strip().split(",") for line in f if line.strip()]
    boards = np.array([[int(ch) for ch in b] for b, _ in rows], np.int8).reshape(-1, 6, 7)
    scores = np.array([int(s) for _, s in rows], np.int8)
    return boards, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default="../shared/data")
    args = parser.parse_args()
    boards, scores = read_book(pathlib.Path(args.shared) / "connect4-book-8ply.csv.gz")
    keys = np.array([c4.board_key(b) for b in boards], np.uint64)
    order = np.argsort(keys)
    out = pathlib.Path("jaxgames/data")
    np.savez_compressed(out / "connect_four_book.npz", keys=keys[order], scores=scores[order])
    c4._book.cache_clear()  # label the UCI set from the book just written
    uci_boards, outcomes = datasets.build_uci_connect4()
    np.savez_compressed(out / "uci_connect4.npz", boards=uci_boards, outcomes=outcomes)
    print(
        f"book: {len(keys):,} positions; UCI set: {len(outcomes):,} positions "
        f"({(outcomes == 1).sum():,} win / {(outcomes == -1).sum():,} loss / "
        f"{(outcomes == 0).sum():,} draw)"
    )


if __name__ == "__main__":
    main()
