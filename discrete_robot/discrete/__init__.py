"""The discrete dynamic robot model (Potts; Neuman & Tourassis) and the choice of integrator."""
