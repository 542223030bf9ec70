"""The machine: the torus's topology, its partitions and their table, the machine descriptions, the platforms.

:mod:`~torus_sim.machine.topology` (an N-dimensional torus of supernodes or midplanes),
:mod:`~torus_sim.machine.partitions` and :mod:`~torus_sim.machine.partition_table` (the contiguous,
wrap-around partitions and their bitmask table), :mod:`~torus_sim.machine.machines` (BG/L, BG/P, Mira
described by name) and :mod:`~torus_sim.machine.platforms` (the one protocol the engine and the policies
see: a torus of partitions, a cluster of nodes, a plug-in's kind).
"""
