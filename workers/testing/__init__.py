"""Test doubles shipped as code: a scripted judge and a local Messages API server."""
