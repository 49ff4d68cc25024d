# Shop: a small Elixir application for the Elixir syntax tests: a
# GenServer keeping orders (a struct), a Registry, a Task supervisor.
defmodule Shop.Order do
  defstruct [:id, :items, :status, :total]
end

defmodule Shop.Cache do
  use GenServer

  def start_link(_ \\ []), do: GenServer.start_link(__MODULE__, %{}, name: __MODULE__)
  def put(order), do: GenServer.call(__MODULE__, {:put, order})
  def get(id), do: GenServer.call(__MODULE__, {:get, id})
  def lookup(id) when is_integer(id), do: get(id)

  @impl true
  def init(state), do: {:ok, state}

  @impl true
  def handle_call({:put, %Shop.Order{id: id} = order}, _from, state),
    do: {:reply, :ok, Map.put(state, id, order)}

  def handle_call({:get, id}, _from, state), do: {:reply, Map.get(state, id), state}
end

# a GenServer with no name: the view knows it by its initial call
defmodule Shop.Worker do
  use GenServer

  def start, do: GenServer.start(__MODULE__, [])
  def work(pid, id), do: GenServer.call(pid, {:work, id})

  @impl true
  def init(state), do: {:ok, state}

  @impl true
  def handle_call({:work, id}, _from, state) do
    :ok = Shop.Cache.put(%Shop.Order{id: id, items: ["book", "pen"], status: :new, total: 300.0})
    {:reply, :done, state}
  end
end

defmodule Shop do
  # everything under one process that stays: the caller of start/0 may go
  def start do
    parent = self()

    spawn(fn ->
      {:ok, _} = Registry.start_link(keys: :unique, name: Shop.Registry)
      {:ok, _} = Task.Supervisor.start_link(name: Shop.Tasks)
      {:ok, _} = Shop.Cache.start_link()
      send(parent, :started)
      Process.sleep(:infinity)
    end)

    receive do
      :started -> :ok
    after
      5000 -> :timeout
    end
  end

  # n orders: each put, then read back by a task registered under its id
  def run(n) do
    for id <- 1..n do
      :ok = Shop.Cache.put(%Shop.Order{id: id, items: ["book", "pen"], status: :new, total: 300.0})

      Task.Supervisor.async(Shop.Tasks, fn ->
        {:ok, _} = Registry.register(Shop.Registry, {:order, id}, :reader)
        Shop.Cache.lookup(id)
      end)
      |> Task.await()
    end

    :ok
  end

  # an unregistered worker that puts orders into the cache for its callers
  def start_worker do
    {:ok, pid} = Shop.Worker.start()
    :persistent_term.put(:shop_worker, pid)
    pid
  end

  # n orders through the worker
  def work(n) do
    pid = :persistent_term.get(:shop_worker)
    for id <- 1..n, do: :done = Shop.Worker.work(pid, id)
    :ok
  end

  # a call that raises in the server's caller
  def bad, do: Shop.Cache.lookup(:not_an_id)

  # scripts/demo --elixir: five orders every 300 ms until the node stops
  def demo do
    spawn(fn ->
      :ok = start()
      Stream.repeatedly(fn -> run(5) && Process.sleep(300) end) |> Stream.run()
    end)

    :ok
  end
end
