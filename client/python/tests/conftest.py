"""Fixtures: a real weftd per module (embedded, temp dir, free port) and a client of it."""

import pytest

import weft
from support import Weftd


@pytest.fixture(scope="module")
def weftd():
    d = Weftd()
    yield d
    d.stop()


@pytest.fixture()
def client(weftd):
    with weft.Client(weftd.url) as c:
        yield c
