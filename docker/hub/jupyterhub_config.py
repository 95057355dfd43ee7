"""JupyterHub for one class of the distributed-JAX course: read it, and adapt it.

`jaxcourse hub up` starts this hub in its own container and passes the class's settings as
environment variables (JAXCOURSE_*), so this one file serves every class. What it sets up:

- who logs in: the class roster, with the passwords `hub up` issued (the roster authenticator);
  instructors are the hub's admins. (An LMS instead: see "Logging in through an LMS" below.)
- each student's server: a container of the course image running `jupyterhub-singleuser`, with
  memory and CPU limits, every capability dropped, and the student's own folder of the class
  directory as their work directory (it outlives the container: culling, `hub down`, upgrades);
- the exchange: a service on this hub that files every submission under the hub's name of the
  student who made it (classroom/exchange); students' servers reach it with their token;
- the idle culler: servers idle for JAXCOURSE_IDLE_TIMEOUT seconds are stopped (work is kept);
- on a Docker Swarm (`hub up --swarm`, JAXCOURSE_SWARM_HOMES set): each server a Swarm service on
  a node labelled jaxcourse.lab=yes, its work folder that node's mount of the class's homes, and
  everything between the hub and a server (the API, the proxy, the exchange) by TLS.
"""

import asyncio
import os
import sys
from pathlib import Path

import docker

from classroom import environment, services
from classroom.hub import homes, networks, quota, server_tls, swarm_tasks

c = get_config()  # noqa: F821 (JupyterHub provides it)
env = os.environ

CLASS_DIR = Path(env[environment.CLASS_DIR])  # the same path on the host and in this container
HUB_NAME = env[environment.HUB_NAME]  # this container's name on the class network
NETWORK = env[environment.NETWORK]
IMAGE = env[environment.IMAGE]
PREFIX = env[environment.PREFIX]  # students' containers are named PREFIX-<username>
COURSE_ROOT = env.get(environment.COURSE_ROOT, "")  # the instructor's checkout, for instructors' servers
CLASS_NAME = env.get(environment.CLASS_NAME, HUB_NAME.removesuffix("-hub"))  # labels what the class owns
CLASS_LABELS = {"jaxcourse.class": CLASS_NAME}  # `hub down` finds what carries them
SUBNETS = env.get(environment.SERVER_SUBNETS, "10.213.0.0/16")  # each server's network takes a /28
WORK_QUOTA = env.get(environment.WORK_QUOTA, "10g")  # each user's work folder, at most
SWARM_HOMES = env.get(environment.SWARM_HOMES, "")  # set by `hub up --swarm`: where nodes mount the homes
NODE_IMAGE_FILE = env.get(environment.NODE_IMAGE_FILE, "")  # ... and a file naming the image nodes pull
ENCRYPTED = env.get(environment.SWARM_ENCRYPTED) == "1"  # ... and whether its overlays can be encrypted
STUDENT_HOME = "/home/jovyan/work"
EXCHANGE_PORT = 10101  # the proxy's way in; on one host, students' servers' too
EXCHANGE_TLS_PORT = 10102  # students' servers' way in, by TLS, on a swarm

# ---- the hub and its proxy -------------------------------------------------------------------
# The proxy (started by the hub, in this container) is the only port published, by `hub up`, on
# 127.0.0.1 unless told otherwise. The hub's own API listens on the class network only.
# With a certificate (`hub up --tls-cert/--tls-key`, required to publish beyond this machine) the
# proxy speaks HTTPS. Inside, on one host, the class network is plain HTTP (the hub API, the
# exchange, the proxy to each server): it never leaves this machine's kernel.
TLS = Path("/etc/jaxcourse/tls")
if (TLS / "cert.pem").is_file():
    c.JupyterHub.ssl_cert, c.JupyterHub.ssl_key = str(TLS / "cert.pem"), str(TLS / "key.pem")
c.JupyterHub.bind_url = f"{'https' if (TLS / 'cert.pem').is_file() else 'http'}://0.0.0.0:8000"
# On a swarm it crosses hosts, on overlays a kernel without IPsec ESP leaves unencrypted: every part
# speaks TLS with a certificate from the class's own CAs (JupyterHub's internal_ssl), and asks its
# caller for one. The CAs stay in the class directory, so running servers stay trusted when the hub
# restarts; each server's key reaches only its node, as a Swarm secret (move_certs, below).
INTERNAL_TLS = bool(SWARM_HOMES)
INSIDE = "https" if INTERNAL_TLS else "http"
CERTS = CLASS_DIR / "hub" / "internal-ssl"
c.JupyterHub.hub_bind_url = f"{INSIDE}://0.0.0.0:8081"
c.JupyterHub.hub_connect_url = f"{INSIDE}://{HUB_NAME}:8081"
if INTERNAL_TLS:
    c.JupyterHub.internal_ssl = True
    c.JupyterHub.internal_certs_location = str(CERTS)
    c.JupyterHub.trusted_alt_names = [f"DNS:{HUB_NAME}"]  # servers reach the hub, and the exchange, by this name
# Each user's server on an origin of its own (<user>.localhost, or <user>.<--domain>): whatever a
# student's server hands a browser (a lab extension she planted, a notebook's output) cannot read
# the hub's cookies or call its API as whoever opened her lab, an instructor included.
c.JupyterHub.subdomain_host = env.get(environment.PUBLIC_URL, "http://localhost:8000")
c.JupyterHub.db_url = f"sqlite:///{CLASS_DIR / 'hub' / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(CLASS_DIR / "hub" / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = str(CLASS_DIR / "hub" / "proxy.pid")
# Restarting the hub leaves students' servers running; they reconnect when it is back.
c.JupyterHub.cleanup_servers = False
c.JupyterHub.cleanup_proxy = True

# ---- who logs in --------------------------------------------------------------------------------
c.JupyterHub.authenticator_class = "classroom.hub.authenticator.RosterAuthenticator"
c.RosterAuthenticator.roster_file = str(CLASS_DIR / "hub" / "roster.json")
# Logging in through an LMS (LTI 1.3) instead, e.g. for Canvas or Moodle; not tested here:
#   pip install jupyterhub-ltiauthenticator (add it to requirements/hub.in), then
#   c.JupyterHub.authenticator_class = "ltiauthenticator.lti13.auth.LTI13Authenticator"
#   c.LTI13Authenticator.issuer = "https://canvas.instructure.com"
#   c.LTI13Authenticator.authorize_url = "https://<your-lms>/api/lti/authorize_redirect"
#   c.LTI13Authenticator.jwks_endpoint = "https://<your-lms>/api/lti/security/jwks"
#   c.LTI13Authenticator.client_id = ["<the client id your LMS gives the tool>"]
#   c.LTI13Authenticator.username_key = "email"  # then map LMS users to the roster's names
# The hub must then be reachable by the LMS over HTTPS (publish it with --host and a TLS proxy).

# ---- each student's server ----------------------------------------------------------------------
c.JupyterHub.spawner_class = "dockerspawner.DockerSpawner"
c.DockerSpawner.image = IMAGE
c.DockerSpawner.network_name = NETWORK  # replaced, for each server, by its own (prepare_server)
c.DockerSpawner.use_internal_ip = True
c.DockerSpawner.name_template = PREFIX + "-{username}"
c.DockerSpawner.remove = True  # a stopped server's container goes; the work folder stays
c.DockerSpawner.cmd = ["jupyterhub-singleuser"]
c.DockerSpawner.notebook_dir = STUDENT_HOME
# {raw_username}: the folder prepare_server makes and chowns; {username} is escaped (ann_lee ->
# ann-5flee), a folder the engine would then make, owned by root.
c.DockerSpawner.volumes = {str(CLASS_DIR / "home" / "{raw_username}"): STUDENT_HOME}
MEMORY = env.get(environment.MEM_LIMIT, "4g").upper()  # JupyterHub reads sizes as 4G, Docker as 4g or 4G
c.DockerSpawner.mem_limit = MEMORY
c.DockerSpawner.cpu_limit = float(env.get(environment.CPU_LIMIT, "2"))
SCRATCH = env.get(environment.SCRATCH, "1g")  # a server's home and /tmp, in memory
c.DockerSpawner.extra_host_config = {
    "cap_drop": ["ALL"],
    "security_opt": ["no-new-privileges"],
    "pids_limit": int(env.get(environment.PIDS_LIMIT, "2048")),
    "memswap_limit": MEMORY,
    # A read-only root: the only disk a server can fill is its work folder (held to its quota by
    # the quota service); its home (pip's --user, caches, JupyterLab's settings) and /tmp are
    # memory of a fixed size, gone when it stops.
    "read_only": True,
    "tmpfs": {"/tmp": f"size={SCRATCH},mode=1777", "/home/jovyan": f"size={SCRATCH},uid=1000,gid=100,mode=0755"},
}
# The image probes its server every second, for a prompt "healthy" on a laptop; one per student
# here, every 30 s is plenty (the probe itself is the image's).
c.DockerSpawner.extra_create_kwargs = {"healthcheck": {"interval": 30 * 10**9}}
c.DockerSpawner.environment = {
    # The exchange, on the class network; the server's own hub token identifies the student.
    environment.EXCHANGE_URL: f"{INSIDE}://{HUB_NAME}:{EXCHANGE_TLS_PORT if INTERNAL_TLS else EXCHANGE_PORT}"
    "/services/exchange/",
}
c.Spawner.default_url = "/lab/tree/START_HERE.md"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# A server's token may call the exchange for its own user, and nothing else of the hub's.
c.Spawner.server_token_scopes = ["users:activity!user", "access:servers!server", "access:services!service=exchange"]


def network_of(spawner):
    return f"{PREFIX}-{spawner.user.name}-net"


def prepare_server(spawner):
    """Before a server starts: its own network, with the hub's container in it and nothing else
    (a classmate's server, the host, the queue: all out of reach); its work folder exists and
    belongs to the container's user.

    A student's server runs as uid 1000 and mounts their own folder only. An instructor's server
    runs as the owner of the class directory (as the grading service does: the gradebook and
    graded/ have one owner), with the class inside the work folder as nbgrader's course root
    (formgrader insists on that) and the course checkout as `course/`. It holds no Docker engine
    and no way to the queue, since a browser opens it: `jaxcourse grade --class` there, and
    formgrader's Autograde, ask the class's grading service (`--sandbox service`), whose workers
    grade in their sandboxes."""
    spawner.network_name = networks.attach(
        docker.from_env(),
        network_of(spawner),
        HUB_NAME,
        CLASS_LABELS,
        SUBNETS,
        spawner.user.name,
        overlay=bool(SWARM_HOMES),
        encrypted=ENCRYPTED,
    )
    why = quota.over(CLASS_DIR / "home" / spawner.user.name, quota.size_bytes(WORK_QUOTA))
    if why:
        raise RuntimeError(why)  # the hub shows it on the spawn page: the server does not start
    instructor = is_instructor(spawner)
    uid, gid = runs_as(spawner)
    home = CLASS_DIR / "home" / spawner.user.name
    home.mkdir(parents=True, exist_ok=True)
    os.chown(home, uid, gid)
    if instructor:
        as_instructor(spawner, f"{uid}:{gid}")
    if SWARM_HOMES:
        on_the_swarm(spawner, instructor, f"{uid}:{gid}")


def is_instructor(spawner):
    return bool(spawner.user.admin and COURSE_ROOT)


def runs_as(spawner):
    """The (uid, gid) a server runs as: a student's, jovyan's; an instructor's, the class's owner's."""
    owner = CLASS_DIR.stat()
    return (owner.st_uid, owner.st_gid) if is_instructor(spawner) else (1000, 100)


def as_instructor(spawner, user):
    """An instructor's server: the class and the checkout mounted, grading through the service."""
    if not SWARM_HOMES:  # a service takes its user in its container spec (on_the_swarm)
        spawner.extra_create_kwargs = {**spawner.extra_create_kwargs, "user": user}
    spawner.volumes = {
        **spawner.volumes,
        COURSE_ROOT: f"{STUDENT_HOME}/course",
        str(CLASS_DIR): f"{STUDENT_HOME}/class",
    }
    spawner.environment = {
        **spawner.environment,
        environment.ROOT: f"{STUDENT_HOME}/course",
        environment.CLASS: f"{STUDENT_HOME}/class",
        environment.INSTRUCTOR: "1",
        environment.SANDBOX: "service",
    }


def on_the_swarm(spawner, instructor, user):
    """A server as a Swarm service: a student's on a node labelled jaxcourse.lab=yes, its work
    folder that node's mount of the class's homes (classroom/hub/homes.py), so it follows the
    student to any node and outlives a node that is lost; an instructor's on the manager, which
    holds the class directory and the checkout it mounts. The same lockdown as a container's,
    as far as a service can say it (no pids limit or no-new-privileges in the engine's API 1.41)."""
    from docker.types import Healthcheck, Mount

    if instructor:
        spawner.extra_placement_spec = {"constraints": ["node.role==manager"]}
    else:
        spawner.image = Path(NODE_IMAGE_FILE).read_text().strip()  # the class's registry's, by digest: the newest
        spawner.volumes = {f"{SWARM_HOMES}/{{raw_username}}": STUDENT_HOME}
        spawner.extra_placement_spec = {"constraints": [f"node.labels.{homes.LAB_LABEL}==yes"]}
    scratch = int(quota.size_bytes(SCRATCH))
    spawner.extra_container_spec = {
        "mounts": spawner.mounts
        + [
            Mount("/tmp", None, type="tmpfs", tmpfs_size=scratch, tmpfs_mode=0o1777),
            Mount("/home/jovyan", None, type="tmpfs", tmpfs_size=scratch, tmpfs_mode=0o1777),
        ],
        "read_only": True,
        "cap_drop": ["ALL"],
        "healthcheck": Healthcheck(test=TLS_PROBE, interval=30 * 10**9),
        **({"user": user} if instructor else {}),
    }


# The image's probe asks its server in plain HTTP; with internal TLS, a server takes only callers
# the hub's CAs vouch for (the hub, the proxy), so a probe shows that it answers TLS on its port.
TLS_PROBE = [
    "CMD",
    "python3",
    "-c",
    "import socket, ssl; ssl._create_unverified_context().wrap_socket("
    "socket.create_connection(('127.0.0.1', 8888), timeout=3)).close()",
]
c.Spawner.pre_spawn_hook = prepare_server
if SWARM_HOMES:
    from dockerspawner import SwarmSpawner

    class ClassSwarmSpawner(SwarmSpawner):
        """A student's server as a Swarm service. It is its service's newest task wanted running
        (after a node is lost, the old one still reads running until the manager writes it off),
        else its newest task; alive in every state up to running (classroom/hub/swarm_tasks.py).
        Its certificate reaches its node as Swarm secrets (move_certs)."""

        async def poll(self):
            task = await self.get_task()
            return 0 if task is None else swarm_tasks.exit_status(task)

        async def get_task(self):
            if await self.get_object() is None:
                return None
            try:
                wanted = await self.docker("tasks", filters={"service": self.service_name, "desired-state": "running"})
                return swarm_tasks.current_task(
                    wanted or await self.docker("tasks", filters={"service": self.service_name})
                )
            except docker.errors.NotFound:  # the service went meanwhile
                return None

        @property
        def volume_binds(self):
            """Without DockerSpawner's certificates volume, a name a node could not resolve."""
            return {source: bind for source, bind in super().volume_binds.items() if bind["bind"] != "/certs"}

        async def move_certs(self, paths):
            """Her server's key, certificate and trusted CAs reach her node as Swarm secrets
            (classroom/hub/server_tls.py), readable by her server's user only."""
            secrets, moved = await asyncio.to_thread(
                server_tls.as_secrets, docker.from_env(), CLASS_LABELS, self.service_name, paths, runs_as(self)
            )
            self.extra_container_spec = {**self.extra_container_spec, "secrets": secrets}
            return moved

    c.JupyterHub.spawner_class = ClassSwarmSpawner
    # Swarm places by reservations: a node whose servers' reservations leave too little is passed over.
    c.ClassSwarmSpawner.mem_guarantee = env.get(environment.MEM_RESERVED, "160m").upper()
    # The proxy checks a server's certificate against the name her browser asked for (her own
    # subdomain: subdomain_host, above); the hub, against her service's name.
    c.ClassSwarmSpawner.ssl_alt_names = lambda spawner: [
        f"DNS:{spawner.internal_hostname}",
        f"DNS:{spawner.user.domain}",
    ]
    c.ClassSwarmSpawner.extra_endpoint_spec = {"mode": "dnsrr"}  # found by DNS: no virtual IP, so no IPVS needed
    c.ClassSwarmSpawner.extra_create_kwargs = {"labels": CLASS_LABELS}  # `hub down` finds them


def release_server(spawner):
    """After a server stops, its network goes (made again at its next start)."""
    networks.detach(docker.from_env(), network_of(spawner), HUB_NAME)
    if SWARM_HOMES:  # ... and so does its certificate
        server_tls.forget(docker.from_env(), spawner.service_name)


c.Spawner.post_stop_hook = release_server


# ---- services -------------------------------------------------------------------------------------
def _script(name):
    """A service's entry point, installed beside this Python (classroom/services.py)."""
    return os.path.join(os.path.dirname(sys.executable), name)


c.JupyterHub.services = [
    {
        # Reached by the proxy on 127.0.0.1 and by students' servers on the class network: at the
        # same port on one host; on a swarm, by TLS at a port of their own (the service's listeners).
        "name": "exchange",
        "url": f"http://127.0.0.1:{EXCHANGE_PORT}",
        "command": [_script(services.EXCHANGE)],
        "environment": {
            environment.CLASS_DIR: str(CLASS_DIR),
            environment.CONFIG_DIR: "/etc/jaxcourse",
            environment.EXCHANGE_BIND: "0.0.0.0",
            **(
                {environment.EXCHANGE_TLS: str(CERTS), environment.EXCHANGE_TLS_PORT: str(EXCHANGE_TLS_PORT)}
                if INTERNAL_TLS
                else {}
            ),
        },
    },
    {
        # Each user's work folder held to [hub] work_quota (classroom/hub/quota.py).
        "name": "quota",
        "command": [_script(services.QUOTA)],
        "environment": {
            environment.CLASS_DIR: str(CLASS_DIR),
            environment.WORK_QUOTA: WORK_QUOTA,
            environment.QUOTA_EVERY: env.get(environment.QUOTA_EVERY, "60"),
        },
    },
    {
        "name": "idle-culler",
        "command": [
            sys.executable,
            "-m",
            "jupyterhub_idle_culler",
            f"--timeout={env.get(environment.IDLE_TIMEOUT, '3600')}",
            *(["--ssl-enabled=True", f"--internal-certs-location={CERTS}"] if INTERNAL_TLS else []),
        ],
    },
]
c.JupyterHub.load_roles = [
    # Students and instructors may use the exchange (each as themselves); nothing more.
    {"name": "user", "scopes": ["self", "access:services!service=exchange"]},
    {
        "name": "idle-culler",
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
        "services": ["idle-culler"],
    },
    {"name": "quota", "scopes": ["list:users", "read:servers", "delete:servers"], "services": ["quota"]},
]
