"""Language model backends: a small protocol (:mod:`.base`) and a registry."""
