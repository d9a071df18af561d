"""Finding what an agent loads: the run's filesystem access (`disk`), the machine facts
(`context`), loading one file and its imports (`loader`), rules directories, lazy loading,
skills, client settings and the environment section. The agents themselves, built from these
pieces, are in `assembler.clients`."""
