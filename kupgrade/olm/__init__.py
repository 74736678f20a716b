"""Operator catalogs (SPEC F): file-based catalogs and legacy package manifests, `opm
validate`'s checks, channel heads and edges, graph rendering, and the subscription resolver.

Pure domain code: `load` reads files, everything else works on the loaded `Catalog`.
"""
