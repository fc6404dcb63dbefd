"""A fixed-base tree split into its independent branches: the subtrees that hang from the base.

Bodies of two subtrees of a fixed base share no joint, so the kinetic energy is a sum over the subtrees (the mass
matrix a(q) is block-diagonal by subtree) and so is gravity's potential V(q) = −Σ m_i gᵀ c_i(q): the equations of
motion of the whole, continuous or discrete, are those of each subtree alone. A mimic follower belongs with its
leader; a follower hung from another subtree than its leader's couples the two, which then stay one branch.
"""

import dataclasses

import numpy as np

from discrete_robot.model.robot_model import RobotModel


@dataclasses.dataclass(frozen=True, eq=False)
class Branch:
    """One independent branch: its coordinates' indices in the whole model's q (in order) and the branch as a
    model of its own (the same base, gravity and name; the links of the branch, its mimic followers)."""

    dofs: np.ndarray
    model: RobotModel


def branches(model: RobotModel) -> list[Branch]:
    """The independent branches of a fixed-base ``model`` (module docstring), in the order of their first link;
    one branch when everything is coupled."""
    root = {}   # link name -> the base's child it hangs from (the followers' links too)
    for link in model.links + tuple(m.link for m in model.mimic):
        root[link.name] = link.name if link.parent == model.base.name else root[link.parent]
    group = {name: name for name in set(root.values())}

    def find(name: str) -> str:
        while group[name] != name:
            name = group[name]
        return name

    leader_link = {name: link.name for link in model.links for name in link.joint.dof_names}
    for follower in model.mimic:
        group[find(root[follower.link.name])] = find(root[leader_link[follower.leader]])
    members: dict[str, list[int]] = {}
    for i, link in enumerate(model.links):
        members.setdefault(find(root[link.name]), []).append(i)
    result = []
    for indices in members.values():
        links = tuple(model.links[i] for i in indices)
        names = {link.name for link in links}
        mimic = tuple(m for m in model.mimic if leader_link[m.leader] in names)
        dofs = np.concatenate([np.arange(model.dof)[model.dof_slices[i]] for i in indices])
        result.append(Branch(dofs, dataclasses.replace(model, links=links, mimic=mimic, fingertip=None, frames=(),
                                                       urdf=None, command_interfaces=())))
    return result
