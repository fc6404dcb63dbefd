"""Models too large to serve, for the size checks every entry point makes before it builds a model
(test/model/test_model_urdf_reader.py, test_model_description.py, test_model_cli.py)."""


def chain_urdf(links: int) -> str:
    """A serial chain of ``links`` revolute links of 1 kg, 0.1 m apart (a 10 000-link chain is 2.9 MB)."""
    parts = ['<robot name="chain">', '<link name="l0"/>']
    for i in range(1, links + 1):
        parts.append(f'<link name="l{i}"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"/>'
                     f'</inertial></link><joint name="j{i}" type="revolute"><parent link="l{i - 1}"/>'
                     f'<child link="l{i}"/><origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>'
                     '<limit lower="-1" upper="1" effort="10" velocity="1"/></joint>')
    return "\n".join([*parts, "</robot>"])
