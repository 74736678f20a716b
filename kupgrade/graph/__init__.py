"""The update graph: model, Cincinnati JSON codec, graph builder, policy and lint."""
